import {
  HISTORY_TABLE_AUTOVACUUM,
  HISTORY_TABLE_AUTOVACUUM_RESET,
  Migration,
  outboxAutovacuumResetSql,
  outboxAutovacuumSql,
} from "@transferops/kit";

/** The statuses a SIM's history counts (the SIM history route's totals, besides every operation). */
export const COUNTED_STATUSES = ["confirmed", "failed", "no_evidence"] as const;

const counted = `('${COUNTED_STATUSES.join("', '")}')`;
const is = (row: "old" | "new", status: string) => `(${row}.status = '${status}')::int`;

/**
 * A SIM's history totals (the SIM history route, store/fleet-facing.ts `simActivity`) counted
 * every operation the SIM ever had: one row per SIM now holds them, so the route reads one row
 * whatever the history (docs/decisions/history.md).
 *
 * The row follows every operation in the transaction that writes it: constraint triggers,
 * deferred to the commit, on an insert and on an update that moves an operation into or out of
 * a counted status or to another SIM (a claim or a dialled outcome fires nothing). Deferred so
 * that the SIM's row is locked only from the trigger at commit to the end of the commit, never
 * while the transaction goes on locking operations (no wait on it can close a circle with an
 * operation's lock). The SIM's deletion (its operations lose their `sim_id`) and the reset delete
 * the row in their own statements (store/fleet-changes.ts, fleet-facing.ts).
 *
 * On a live history: `create trigger` takes SHARE ROW EXCLUSIVE on dispatch.operations (reads go
 * on, writes wait) until this migration commits, and in that time the migration only writes an
 * uncounted row per SIM that has operations, found by a skip scan of `operations_sim_holding`
 * (one index descent a SIM: milliseconds for a fleet). The counting itself runs after, outside
 * the migration, a SIM at a time under that SIM's row lock (`countSimHistories`, at start); the
 * route counts from the table for a SIM not counted yet.
 *
 * Autovacuum by count where the defaults wait for a share of a large table
 * (docs/decisions/history.md, "Autovacuum"): `alter table ... set (...)` takes SHARE UPDATE
 * EXCLUSIVE, which no read or write waits on.
 *
 * `down()` puts back the schema of Migration0010SearchIndex exactly (the test compares the
 * schema dumps): the counts are dropped, the tables back on the server's autovacuum defaults.
 * `drop trigger` takes ACCESS EXCLUSIVE on dispatch.operations until it commits (milliseconds).
 */
export class Migration0011SimCounts extends Migration {
  override name = "Migration0011SimCounts";

  up(): void {
    this.addSql(`create table dispatch.sim_operation_counts (
      sim_id text primary key,
      operations bigint not null default 0,
      confirmed bigint not null default 0,
      failed bigint not null default 0,
      no_evidence bigint not null default 0,
      counted boolean not null
    ) with (fillfactor = 50, autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000)`);
    this.addSql(countFunction());
    this.addSql(`create constraint trigger sim_counts_insert after insert on dispatch.operations
      deferrable initially deferred for each row when (new.sim_id is not null)
      execute function dispatch.count_sim_operation()`);
    this.addSql(`create constraint trigger sim_counts_update after update of status, sim_id on dispatch.operations
      deferrable initially deferred for each row
      when (new.sim_id is not null and (old.sim_id is distinct from new.sim_id
        or (old.status <> new.status and (old.status in ${counted} or new.status in ${counted}))))
      execute function dispatch.count_sim_operation()`);
    // Every SIM with operations, uncounted: one descent of the index a SIM (a skip scan).
    this.addSql(`with recursive s as (
        (select sim_id from dispatch.operations where sim_id is not null order by sim_id limit 1)
        union all
        select (select o.sim_id from dispatch.operations o where o.sim_id > s.sim_id order by o.sim_id limit 1)
          from s where s.sim_id is not null)
      insert into dispatch.sim_operation_counts (sim_id, counted) select sim_id, false from s where sim_id is not null`);
    this.addSql(`alter table dispatch.operations set (${HISTORY_TABLE_AUTOVACUUM})`);
    for (const sql of outboxAutovacuumSql("dispatch")) this.addSql(sql);
  }

  override down(): void {
    this.addSql(`drop trigger sim_counts_update on dispatch.operations`);
    this.addSql(`drop trigger sim_counts_insert on dispatch.operations`);
    this.addSql(`drop function dispatch.count_sim_operation()`);
    this.addSql(`drop table dispatch.sim_operation_counts`);
    this.addSql(`alter table dispatch.operations reset (${HISTORY_TABLE_AUTOVACUUM_RESET})`);
    for (const sql of outboxAutovacuumResetSql("dispatch")) this.addSql(sql);
  }
}

/**
 * An operation's contribution to its SIM's row, applied at commit: an update within one SIM
 * moves the counts between statuses; a new operation, or one moved to another SIM, adds one
 * (and takes one from the SIM it left). A SIM's first operation creates its row, counted.
 */
export function countFunction(): string {
  const delta = (c: string) => `${c} = ${c} + ${is("new", c)} - ${is("old", c)}`;
  const minus = (c: string) => `${c} = ${c} - ${is("old", c)}`;
  const plus = (c: string) => `${c} = c.${c} + excluded.${c}`;
  const columns = COUNTED_STATUSES;
  return `create function dispatch.count_sim_operation() returns trigger language plpgsql as $$
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
        values (new.sim_id, 1, ${columns.map((s) => is("new", s)).join(", ")}, true)
        on conflict (sim_id) do update set operations = c.operations + 1, ${columns.map(plus).join(", ")};
      return null;
    end $$`;
}
