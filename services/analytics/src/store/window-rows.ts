import type { Scope } from "../domain/scope.ts";
import { windowParts, type Window } from "../domain/window.ts";
import { agentFilter, and, type Filter } from "./filters.ts";
import { MONTHLY_ROLLUPS, monthlyOf } from "./migrations/Migration0014MonthlyRollups.ts";

/**
 * A scope's rows of a window in a per-day rollup, as a subquery named `alias`: the months the
 * window holds whole from the rollup's monthly copy (Migration0014MonthlyRollups), its edge days
 * from the daily table; `all` from the monthly copy alone. Its columns are the rollup's keys and
 * sums, not its day: every read of it sums them. What it reads is at most 12 months and 61 days
 * of rows (and per SIM, hour, handset, agent, status or amount), whatever the history.
 */
export function windowRows(daily: string, scope: Scope, w: Window, alias = "r"): Filter {
  const rollup = MONTHLY_ROLLUPS.find((r) => r.daily === daily);
  if (!rollup) throw new Error(`${daily} has no monthly copy`);
  const columns = [...rollup.keys, ...rollup.sums].map(([c]) => c).join(", ");
  const mine: Filter = rollup.agent ? agentFilter(scope, rollup.agent) : { sql: "", params: [] };
  const from = (table: string, range?: Filter): Filter => {
    const f = and(mine, range ?? { sql: "", params: [] });
    return { sql: `select ${columns} from analytics.${table} where ${f.sql}`, params: f.params };
  };
  const parts = windowParts(w);
  const selects = parts.all
    ? [from(monthlyOf(daily))]
    : [
        ...parts.days.map((d) =>
          from(daily, { sql: "local_day between ?::date and ?::date", params: [d.firstDay, d.lastDay] }),
        ),
        ...(parts.months
          ? [
              from(monthlyOf(daily), {
                sql: "month between ?::date and ?::date",
                params: [parts.months.first, parts.months.last],
              }),
            ]
          : []),
      ];
  return {
    sql: `(${selects.map((s) => s.sql).join(" union all ")}) ${alias}`,
    params: selects.flatMap((s) => s.params),
  };
}
