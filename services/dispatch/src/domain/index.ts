// The dispatch domain: pure rules and state machines, no I/O. `rpc/` and `events/`
// import from here; nothing here imports from the rest of the service.

export * from "./errors.ts";
export * from "./reasons.ts";
export * from "./vocabulary.ts";
export * from "./operators.ts";
export * from "./request-rules.ts";
export * from "./idempotency.ts";
export * from "./grant.ts";
export * from "./selection.ts";
export * from "./admission.ts";
export * from "./operation-state.ts";
export * from "./device-poll.ts";
export * from "./ussd-templates.ts";
export * from "./name-check.ts";
export * from "./windows.ts";
export * from "./correlation.ts";
export * from "./attach-proof.ts";
export * from "./scope.ts";
export * from "./list-filters.ts";
