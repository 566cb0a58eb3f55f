import { Migration, type ConcurrentIndex } from "@transferops/kit";
import { COUNTED_STATUSES, countFunction } from "./Migration0011SimCounts.ts";

/** The operation types whose `no_evidence` nobody waits on (no money moved): not in the unproven backlog. */
export const UNPROVEN_EXCLUDED_TYPES = ["balance", "mini_statement"] as const;

/** Whether a row (`old`, `new` or a table's own) is in the unproven backlog, as 0 or 1. */
export const unprovenOf = (row: string) =>
  `(${row}.status = 'no_evidence' and ${row}.op_type not in ('${UNPROVEN_EXCLUDED_TYPES.join("', '")}'))::int`;

/**
 * Fleet health's unproven backlog (store/fleet-facing.ts `sweepBacklog`) counted every
 * `no_evidence` transfer, a share of the history that grows with it (79,515 entries, 2.8 s at
 * 4,000,000 operations; docs/decisions/history.md). Each SIM's counts row now holds its own
 * (`unproven`), kept by the same deferred triggers as its totals (Migration0011SimCounts: an
 * operation leaving or entering `no_evidence` already fires them), so the route sums a row per
 * SIM. Per SIM, not one fleet row: every proof and arbitration would update that one row and
 * wait on each other's commits. An operation's `op_type` never changes, so no trigger watches it.
 *
 * Operations of no SIM (a deleted SIM's: store/fleet-changes.ts `forgetReference` deletes its row)
 * are counted from `operations_unproven_no_sim`, a partial index of just those, built
 * concurrently after this migration (SHARE UPDATE EXCLUSIVE: writes go on); until it is built the
 * count walks `operations_no_evidence`.
 *
 * On a live history: `lock table` takes SHARE ROW EXCLUSIVE on dispatch.operations (reads go on,
 * writes wait) until this migration commits, so that no transition commits between the fill and
 * the new trigger function; in that time the fill reads the `no_evidence` rows through
 * `operations_no_evidence` (the backlog, 2 % of a history: about 80,000 rows at 4,000,000) and
 * writes a row per SIM. `alter table ... add column` with a constant default takes ACCESS
 * EXCLUSIVE on dispatch.sim_operation_counts (a catalog change, no rewrite); the SIM history
 * route waits for the commit.
 *
 * `down()` puts back the schema of Migration0011SimCounts exactly (its function, the column and
 * the index dropped; the test compares the schema dumps). `drop index` takes ACCESS EXCLUSIVE on
 * dispatch.operations until it commits (milliseconds).
 */
export class Migration0012UnprovenCounts extends Migration {
  override name = "Migration0012UnprovenCounts";

  static readonly concurrentIndexes: readonly ConcurrentIndex[] = [
    {
      name: "operations_unproven_no_sim",
      on: `dispatch.operations (operation_id) where sim_id is null and ${unprovenOf("operations")} = 1`,
    },
  ];

  up(): void {
    this.addSql(`lock table dispatch.operations in share row exclusive mode`);
    this.addSql(`alter table dispatch.sim_operation_counts add column unproven bigint not null default 0`);
    this.addSql(countWithUnproven());
    this.addSql(`update dispatch.sim_operation_counts c set unproven = x.n
      from (select sim_id, count(*) as n from dispatch.operations
             where status = 'no_evidence' and sim_id is not null and ${unprovenOf("operations")} = 1 group by sim_id) x
     where c.sim_id = x.sim_id`);
  }

  override down(): void {
    this.addSql(`drop index if exists dispatch.operations_unproven_no_sim`);
    this.addSql(countFunction().replace(/^create function/, "create or replace function"));
    this.addSql(`alter table dispatch.sim_operation_counts drop column unproven`);
  }
}

const is = (row: "old" | "new", status: string) => `(${row}.status = '${status}')::int`;

/**
 * Migration0011SimCounts' function with the unproven backlog beside the statuses: an update
 * within one SIM moves it by the difference, a move to another SIM takes it from the SIM left
 * and adds it to the new one, an insert adds it.
 */
function countWithUnproven(): string {
  const columns = [...COUNTED_STATUSES, "unproven"];
  const of = (row: "old" | "new", c: string) => (c === "unproven" ? unprovenOf(row) : is(row, c));
  const delta = (c: string) => `${c} = ${c} + ${of("new", c)} - ${of("old", c)}`;
  const minus = (c: string) => `${c} = ${c} - ${of("old", c)}`;
  const plus = (c: string) => `${c} = c.${c} + excluded.${c}`;
  return `create or replace function dispatch.count_sim_operation() returns trigger language plpgsql as $$
    begin
      if tg_op = 'UPDATE' and old.sim_id = new.sim_id then
        update dispatch.sim_operation_counts set ${columns.map(delta).join(", ")} where sim_id = new.sim_id;
        return null;
      end if;
      if tg_op = 'UPDATE' and old.sim_id is not null then
        update dispatch.sim_operation_counts set operations = operations - 1, ${columns.map(minus).join(", ")}
          where sim_id = old.sim_id;
      end if;
      insert into dispatch.sim_operation_counts as c (sim_id, operations, ${columns.join(", ")}, counted)
        values (new.sim_id, 1, ${columns.map((c) => of("new", c)).join(", ")}, true)
        on conflict (sim_id) do update set operations = c.operations + 1, ${columns.map(plus).join(", ")};
      return null;
    end $$`;
}
