import type { EntityManager } from "@transferops/kit";
import type { AnalyticsConfig } from "../config.ts";
import type { Scope } from "../domain/scope.ts";
import type { Window } from "../domain/window.ts";
import { loadFigures, transactionTotals } from "./report.ts";
import { dailyRows, fleetAgentRows, hourRows, messageTotals, operationTotals, statusCounts } from "./rollups.ts";

export type ReportFigures = Awaited<ReturnType<typeof readFigures>>;

/** Every figure of a report, read at once: the fleet's from its per-day rollups, an agent's from its own. */
export async function readFigures(
  em: EntityManager,
  config: AnalyticsConfig,
  scope: Scope,
  w: Window,
  prevW: Window | undefined,
  weekly: boolean,
  now: Date,
) {
  const [t, days, hours, agents, msgs, tx, byStatus, load, prev, prevTx] = await Promise.all([
    operationTotals(em, scope, w),
    dailyRows(em, scope, w, weekly),
    hourRows(em, scope, w),
    scope.fleet ? fleetAgentRows(em, w) : Promise.resolve([]),
    messageTotals(em, scope, w),
    transactionTotals(em, scope, w),
    statusCounts(em, scope, w),
    loadFigures(em, scope, new Date(now.getTime() - config.balanceStalenessMs)),
    prevW ? operationTotals(em, scope, prevW) : undefined,
    prevW ? transactionTotals(em, scope, prevW) : undefined,
  ]);
  return { totals: t, days, hours, agents, messages: msgs, tx, byStatus, load, prev, prevTx };
}
