import {
  countSimHistory,
  deleteAllOperations,
  simActivity as simActivityRows,
  sweepBacklog as backlog,
} from "../store/fleet-facing.ts";
import type { DispatchDeps } from "./ports.ts";

/** A SIM's latest operations (250) and its counts. */
export async function simActivity(deps: DispatchDeps, simId: string) {
  return simActivityRows(deps.db.em(), simId, 250);
}

/** Deletes every operation and proof and empties the idle handsets' queue. */
export async function resetOperations(deps: DispatchDeps, by: string | undefined) {
  const deleted = await deps.db.tx((em) => deleteAllOperations(em));
  deps.idle.clear();
  deps.log.warn({ deleted, by }, "operations reset");
  return deleted;
}

/** Operations past their evidence window the sweep has not reached, and those unproven waiting. */
export async function sweepBacklog(deps: DispatchDeps) {
  return backlog(deps.db.em(), deps.now());
}

/**
 * Counts, a SIM per transaction, the SIMs Migration0011SimCounts left uncounted (a history
 * migrated live); run at start. Returns how many it counted; another replica counting beside
 * it takes other SIMs.
 */
export async function countSimHistories(deps: Pick<DispatchDeps, "db" | "log">): Promise<number> {
  const started = Date.now();
  let n = 0;
  while (await deps.db.tx((em) => countSimHistory(em))) n++;
  if (n > 0) deps.log.info({ sims: n, ms: Date.now() - started }, "SIM history totals counted");
  return n;
}
