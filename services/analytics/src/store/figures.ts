import type { EntityManager } from "@transferops/kit";
import type { AnalyticsConfig } from "../config.ts";
import type { Scope } from "../domain/scope.ts";
import type { Window } from "../domain/window.ts";
import { dailyRows, hourRows, loadFigures, operationTotals, statusCounts, transactionTotals } from "./report.ts";
import {
  fleetAgentRows,
  fleetDailyRows,
  fleetHourRows,
  fleetStatusCounts,
  fleetTotals,
  messageTotalsFromRollup,
} from "./rollups.ts";

export type ReportFigures = Awaited<ReturnType<typeof readFigures>>;

/** Every figure of a report, read at once: the fleet from the per-day rollups, an agent from its own rows. */
export async function readFigures(
  em: EntityManager,
  config: AnalyticsConfig,
  scope: Scope,
  w: Window,
  prevW: Window | undefined,
  weekly: boolean,
  now: Date,
) {
  const totals = (win: Window) => (scope.fleet ? fleetTotals(em, win) : operationTotals(em, scope, win));
  const [t, days, hours, agents, msgs, tx, byStatus, load, prev, prevTx] = await Promise.all([
    totals(w),
    scope.fleet ? fleetDailyRows(em, w, weekly) : dailyRows(em, scope, w, weekly),
    scope.fleet ? fleetHourRows(em, w) : hourRows(em, scope, w),
    scope.fleet ? fleetAgentRows(em, w) : Promise.resolve([]),
    messageTotalsFromRollup(em, w, scope.fleet ? undefined : scope.agentId),
    transactionTotals(em, scope, w),
    scope.fleet ? fleetStatusCounts(em, w) : statusCounts(em, scope, w),
    loadFigures(em, scope, new Date(now.getTime() - config.balanceStalenessMs)),
    prevW ? totals(prevW) : undefined,
    prevW ? transactionTotals(em, scope, prevW) : undefined,
  ]);
  return { totals: t, days, hours, agents, messages: msgs, tx, byStatus, load, prev, prevTx };
}
