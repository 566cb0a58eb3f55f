export * from "./reasons.ts";
export * from "./rules.ts";
export * from "./ownership.ts";
export * from "./transaction-state.ts";
export * from "./receiver.ts";
