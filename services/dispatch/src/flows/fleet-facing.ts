import { deleteAllOperations, simActivity as simActivityRows, sweepBacklog as backlog } from "../store/fleet-facing.ts";
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
