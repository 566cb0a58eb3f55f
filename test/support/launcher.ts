// The system as `npm start` composes it, for the scripts that run it outside vitest (the board's
// screenshots): tests and tools reach the launcher through test/support, never deploy/ directly.
export { startSystem, type RunningSystem } from "../../deploy/local/system.ts";
