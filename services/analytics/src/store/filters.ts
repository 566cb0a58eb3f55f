import type { Scope } from "../domain/scope.ts";
import type { Window } from "../domain/window.ts";

/** SQL text and parameters of a filter, built only from fixed fragments. */
export interface Filter {
  sql: string;
  params: unknown[];
}

/** The filters together; "true" when there is none. */
export const and = (...fs: Filter[]): Filter => ({
  sql:
    fs
      .map((f) => f.sql)
      .filter(Boolean)
      .join(" and ") || "true",
  params: fs.flatMap((f) => f.params),
});

/** The window's local days (none with `all`). */
export function dayFilter(w: Window, column = "local_day"): Filter {
  return w.all
    ? { sql: "", params: [] }
    : { sql: `${column} between ?::date and ?::date`, params: [w.firstDay, w.lastDay] };
}

/** The scope's rows of a table keyed by agent (none for the fleet). */
export const agentFilter = (s: Scope, column = "agent_id"): Filter =>
  s.fleet ? { sql: "", params: [] } : { sql: `${column} = ?`, params: [s.agentId] };
