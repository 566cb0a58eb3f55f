import { LOCAL_OFFSET_MS, Migration } from "@transferops/kit";

/** What the balance chain reads of a message besides its SIM and day (store/messages.ts CHAIN_COLUMNS, and IN_CHAIN's state). */
const CHAIN_CHANGE_COLUMNS = [
  "state",
  "outcome",
  "stored_at",
  "kind",
  "amount",
  "fee",
  "commission",
  "balance_after",
  "direction",
  "operator_ref",
] as const;

/** The local day (UTC+1, kit local-day.ts) of a message's `received_at`, in SQL. */
export const localDaySql = (column: string) =>
  `((${column} at time zone 'UTC') + interval '${LOCAL_OFFSET_MS / 1000} seconds')::date`;

/** The trigger function's body as this migration wrote it (Migration0016TodayRuns' `down()` puts it back). */
export const COUNT_CHAIN_CHANGE = `
      begin
        if tg_op = 'UPDATE'
           and (old.sim_id, ${localDaySql("old.received_at")}) is distinct from (new.sim_id, ${localDaySql("new.received_at")}) then
          insert into evidence.day_chains as c (sim_id, day, changes) values (old.sim_id, ${localDaySql("old.received_at")}, 1)
            on conflict (sim_id, day) do update set changes = c.changes + 1;
        end if;
        insert into evidence.day_chains as c (sim_id, day, changes) values (new.sim_id, ${localDaySql("new.received_at")}, 1)
          on conflict (sim_id, day) do update set changes = c.changes + 1;
        return null;
      end `;

/**
 * The fleet's day of reconciliation read every message of the day and summed each SIM's
 * chain again at every call (887.7 ms p95 at 4,000,000 operations, a day of 40,145 messages;
 * docs/decisions/history.md, "A closed day's chain: kept once summed"). A closed day (before
 * today) rarely changes, so its sums are kept: `evidence.day_chains`, a row per SIM and local
 * day, holds how many times a message of the day changed what its chain reads (`changes`), and
 * the day's sums (`balance`, domain/balance-chain.ts DayBalance) with the count they were
 * computed at (`balance_changes`) and the message before the day they started from
 * (`before_key`). store/day-chains.ts reads them and keeps them; a row is valid while nothing
 * changed since (the counts equal, the same message before the day).
 *
 * `changes` is counted by a row trigger on evidence.messages, in the transaction of the change,
 * so no write path can forget it: an insert of a finished message, an update of one of
 * CHAIN_CHANGE_COLUMNS, `sim_id` or `received_at` that changes it (a message that moves to
 * another SIM or day counts on both). The deletes of messages (a SIM forgotten, the reset)
 * delete the rows themselves (store/messages.ts). On the SMS path: one upsert of a small row
 * per message finished, by primary key, after the day's row of daily_reconciliations the same
 * transaction already wrote; a SIM's messages of one day wait on each other there as they
 * already do on that row.
 *
 * On a live history: `create trigger` takes SHARE ROW EXCLUSIVE on evidence.messages (reads go
 * on, writes wait) until the migration commits; nothing is filled (no row: the day is summed at
 * its first read, then kept). `down()` drops all of it: the schema of Migration0010Autovacuum.
 */
export class Migration0011DayChains extends Migration {
  override name = "Migration0011DayChains";

  up(): void {
    this.addSql(`create table evidence.day_chains (
      sim_id text not null,
      day date not null,
      changes bigint not null default 0,
      balance jsonb,
      balance_changes bigint,
      before_key text,
      kept_at timestamptz,
      primary key (sim_id, day))`);
    this.addSql(`comment on table evidence.day_chains is
      'A SIM''s local day: how often its chain messages changed; a closed day''s sums kept (store/day-chains.ts)'`);
    this.addSql(
      `create function evidence.count_chain_change() returns trigger language plpgsql as $$${COUNT_CHAIN_CHANGE}$$`,
    );
    const changed = ["sim_id", "received_at", ...CHAIN_CHANGE_COLUMNS];
    this.addSql(`create trigger messages_chain_insert after insert on evidence.messages
      for each row when (new.state = 'done') execute function evidence.count_chain_change()`);
    this.addSql(`create trigger messages_chain_update after update of ${changed.join(", ")} on evidence.messages
      for each row when ((${changed.map((c) => `old.${c}`).join(", ")}) is distinct from (${changed.map((c) => `new.${c}`).join(", ")}))
      execute function evidence.count_chain_change()`);
  }

  override down(): void {
    this.addSql(`drop trigger messages_chain_update on evidence.messages`);
    this.addSql(`drop trigger messages_chain_insert on evidence.messages`);
    this.addSql(`drop function evidence.count_chain_change()`);
    this.addSql(`drop table evidence.day_chains`);
  }
}
