// The handset simulator: a simulated operator (wallets, PINs, USSD menus) and simulated
// handsets that poll the gateway, dial, and report. Used by the end-to-end tests, the
// poll benchmark and the `cli.ts` command.
export * from "./operator.ts";
export * from "./handset.ts";
