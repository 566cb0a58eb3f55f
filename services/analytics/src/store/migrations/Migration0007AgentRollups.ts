import { Migration } from "@transferops/kit";
import { NO_SIM } from "./Migration0003Rollups.ts";
import { rebuildRollupsWithAmountsSql } from "./Migration0006AmountCounts.ts";

/**
 * An agent's own view read the agent's rows of the window from `operations_agent_day` (an
 * agent's year of operations for a 365-day window), and its messages through a join of the
 * window's messages, the fleet's, with the agent's operations. It now reads per-agent per-day
 * rollups, as the fleet view reads the fleet's: rows per day of the window, never per operation.
 *
 * - `agent_op_daily`, `agent_hourly`, `agent_sim_daily`: `op_daily`, `op_hourly` and
 *   `op_sim_daily` per agent (counts and sums per status and flags; per local hour; per SIM).
 * - `agent_delay_seconds`: `delay_seconds` per agent (Migration0005DelaySeconds): the agent's
 *   proof-delay percentiles come from the window's buckets, within a bucket's width of the
 *   rows' (under a second below 600 s), where they were percentile_cont over the rows.
 * - `agent_amount_hist`, `agent_amount_daily`: `amount_hist` and `amount_daily`
 *   (Migration0006AmountCounts) per agent: its median and largest transfer, exact.
 * - `agent_msg_daily`: per agent and local day of the message, the messages tied to the agent's
 *   operations (`messages.operation_id`), how many are ambiguous and how many dismissed: what
 *   the join of the two tables gives. Kept from both sides: a message's change adds or removes
 *   its contribution to its operation's agent (none while the operation is not projected yet:
 *   the topics are consumed apart, a rebuild replays them at their own pace); an operation's
 *   insert or delete adds or removes its messages' (found by `messages_operation`). The two
 *   consumers write in transactions of their own: both sides take a transaction advisory lock
 *   on the operation's id before they look at the other table, so of a message and its
 *   operation written at once, the second to take the lock sees the first committed and counts
 *   the pair, once.
 *
 * Each table is kept by triggers in the statement that changes a row, like every rollup; an
 * update that changes no column a table reads fires nothing. `rebuild_rollups()` rebuilds them
 * (`rebuild_agent_rollups()`).
 *
 * On a live history: `create trigger` takes SHARE ROW EXCLUSIVE on analytics.operations and
 * analytics.messages, `create index messages_operation` SHARE on analytics.messages, until
 * this migration commits; the tables are filled from the rows in that time. The consumers'
 * writes wait that long (analytics' lag grows, the events are applied after), the routes' reads
 * go on (docs/decisions/history.md, "Migrations on a live history").
 *
 * `down()` puts back the schema of Migration0006AmountCounts exactly (its `rebuild_rollups()`, to
 * the space; the test compares the schema dumps); its `drop trigger`s take ACCESS EXCLUSIVE on
 * analytics.operations and analytics.messages until the commit that follows.
 */
export class Migration0007AgentRollups extends Migration {
  override name = "Migration0007AgentRollups";

  up(): void {
    for (const sql of AGENT_TABLES) this.addSql(sql);
    this.addSql(`create index messages_operation on analytics.messages (operation_id) where operation_id is not null`);
    this.addSql(agentRollup());
    this.addSql(messageOwnerRollups());
    this.addSql(opMessagesRollup());
    for (const sql of triggers()) this.addSql(sql);
    this.addSql(rebuildAgentRollups());
    this.addSql(`select analytics.rebuild_agent_rollups()`);
    // Their statistics now, not at autovacuum's first pass: each read is a range of an agent's rows.
    this.addSql(`analyze ${AGENT_TABLES.map((t) => /analytics\.\w+/.exec(t)![0]).join(", ")}`);
    this.addSql(`create or replace function analytics.rebuild_rollups() returns void language sql as $$
      select analytics.rebuild_day_rollups();
      select analytics.rebuild_amount_counts();
      select analytics.rebuild_agent_rollups();
    $$`);
  }

  override down(): void {
    for (const [table, name] of [
      ["operations", "agent_rollup"],
      ["messages", "agent_msg_rollup"],
      ["operations", "op_msg_rollup"],
    ]) {
      this.addSql(`drop trigger ${name}_update on analytics.${table}`);
      this.addSql(`drop trigger ${name} on analytics.${table}`);
      this.addSql(`drop function analytics.${name}_trigger()`);
      this.addSql(`drop function analytics.${name}(analytics.${table}, int)`);
    }
    this.addSql(rebuildRollupsWithAmountsSql("create or replace"));
    this.addSql(`drop function analytics.rebuild_agent_rollups()`);
    this.addSql(`drop index analytics.messages_operation`);
    this.addSql(`drop table ${AGENT_TABLES.map((t) => /analytics\.\w+/.exec(t)![0]).join(", ")}`);
  }
}

const AGENT_TABLES = [
  `create table analytics.agent_op_daily (
    agent_id uuid not null,
    local_day date not null,
    status text not null,
    is_transfer boolean not null,
    auto boolean not null,
    settled boolean not null,
    lost boolean not null,
    n bigint not null,
    montant bigint not null,
    fee bigint not null,
    fee_n bigint not null,
    delay_n bigint not null,
    primary key (agent_id, local_day, status, is_transfer, auto, settled, lost)
  )`,
  `create table analytics.agent_hourly (
    agent_id uuid not null,
    local_day date not null,
    local_hour smallint not null,
    local_dow smallint not null,
    n bigint not null,
    primary key (agent_id, local_day, local_hour)
  )`,
  `create table analytics.agent_sim_daily (
    agent_id uuid not null,
    local_day date not null,
    sim_id uuid not null,
    n bigint not null,
    primary key (agent_id, local_day, sim_id)
  )`,
  `create table analytics.agent_delay_seconds (
    agent_id uuid not null,
    local_day date not null,
    bucket int not null,
    n bigint not null,
    sum_s double precision not null,
    primary key (agent_id, local_day, bucket)
  )`,
  `create table analytics.agent_amount_hist (
    agent_id uuid not null,
    local_day date not null,
    bucket int not null,
    n bigint not null,
    primary key (agent_id, local_day, bucket)
  )`,
  // An agent's bucket of a window is one range of the primary key.
  `create table analytics.agent_amount_daily (
    agent_id uuid not null,
    bucket int not null,
    local_day date not null,
    montant bigint not null,
    n bigint not null,
    primary key (agent_id, bucket, local_day, montant)
  )`,
  `create table analytics.agent_msg_daily (
    agent_id uuid not null,
    local_day date not null,
    n bigint not null,
    ambiguous bigint not null,
    dismissed bigint not null,
    primary key (agent_id, local_day)
  )`,
];

const AUTO = (r: string) =>
  `${r}status = 'confirmed' and ${r}confirmed_by is not distinct from 'proof' and not ${r}touched_by_hand`;
const CONFIRMED_TRANSFER = (r: string) => `${r}is_transfer and ${r}status = 'confirmed'`;

/** A row's contribution (s = 1 or -1) to its agent's rollups. */
function agentRollup(): string {
  return `create function analytics.agent_rollup(r analytics.operations, s int) returns void language sql as $$
    insert into analytics.agent_op_daily as d (agent_id, local_day, status, is_transfer, auto, settled, lost, n, montant,
      fee, fee_n, delay_n)
    values (r.agent_id, r.local_day, r.status, r.is_transfer, ${AUTO("r.")}, r.settled_by_hand is not null, r.lost, s,
            s * r.montant, s * coalesce(r.fee, 0), s * (r.fee is not null)::int, s * (r.proof_delay_s is not null)::int)
    on conflict (agent_id, local_day, status, is_transfer, auto, settled, lost) do update
      set n = d.n + excluded.n, montant = d.montant + excluded.montant, fee = d.fee + excluded.fee,
          fee_n = d.fee_n + excluded.fee_n, delay_n = d.delay_n + excluded.delay_n;
    insert into analytics.agent_hourly as h (agent_id, local_day, local_hour, local_dow, n)
    values (r.agent_id, r.local_day, r.local_hour, r.local_dow, s)
    on conflict (agent_id, local_day, local_hour) do update set n = h.n + excluded.n;
    insert into analytics.agent_sim_daily as m (agent_id, local_day, sim_id, n)
    values (r.agent_id, r.local_day, coalesce(r.sim_id, '${NO_SIM}'), s)
    on conflict (agent_id, local_day, sim_id) do update set n = m.n + excluded.n;
    insert into analytics.agent_delay_seconds as x (agent_id, local_day, bucket, n, sum_s)
    select r.agent_id, r.local_day, analytics.delay_bucket(r.proof_delay_s), s, s * r.proof_delay_s
    where r.proof_delay_s is not null
    on conflict (agent_id, local_day, bucket) do update set n = x.n + excluded.n, sum_s = x.sum_s + excluded.sum_s;
    insert into analytics.agent_amount_hist as x (agent_id, local_day, bucket, n)
    select r.agent_id, r.local_day, analytics.hist_bucket(r.montant), s where ${CONFIRMED_TRANSFER("r.")}
    on conflict (agent_id, local_day, bucket) do update set n = x.n + excluded.n;
    insert into analytics.agent_amount_daily as x (agent_id, bucket, local_day, montant, n)
    select r.agent_id, analytics.hist_bucket(r.montant), r.local_day, r.montant, s where ${CONFIRMED_TRANSFER("r.")}
    on conflict (agent_id, bucket, local_day, montant) do update set n = x.n + excluded.n;
  $$`;
}

/** The lock both sides of `agent_msg_daily` take on an operation's id before reading the other table. */
const OWNER_LOCK = (id: string) =>
  `select pg_advisory_xact_lock(hashtext('analytics.agent_msg_daily'), hashtext(${id}::text))`;
const MSG_SUMS = `on conflict (agent_id, local_day) do update set n = d.n + excluded.n,
      ambiguous = d.ambiguous + excluded.ambiguous, dismissed = d.dismissed + excluded.dismissed`;

/** A message's contribution to the agent of its operation, if that operation is projected. */
function messageOwnerRollups(): string {
  return `create function analytics.agent_msg_rollup(m analytics.messages, s int) returns void language sql as $$
    ${OWNER_LOCK("m.operation_id")};
    insert into analytics.agent_msg_daily as d (agent_id, local_day, n, ambiguous, dismissed)
    select o.agent_id, m.local_day, s, s * m.is_ambiguous::int, s * (m.dismissed_at is not null)::int
    from analytics.operations o where o.operation_id = m.operation_id
    ${MSG_SUMS};
  $$`;
}

/** An operation's messages' contributions to its agent. */
function opMessagesRollup(): string {
  return `create function analytics.op_msg_rollup(r analytics.operations, s int) returns void language sql as $$
    ${OWNER_LOCK("r.operation_id")};
    insert into analytics.agent_msg_daily as d (agent_id, local_day, n, ambiguous, dismissed)
    select r.agent_id, m.local_day, s * count(*), s * count(*) filter (where m.is_ambiguous),
           s * count(*) filter (where m.dismissed_at is not null)
    from analytics.messages m where m.operation_id = r.operation_id group by m.local_day
    ${MSG_SUMS};
  $$`;
}

/** What each rollup reads of a row: an update that changes none of it fires nothing. */
const AGENT_COLUMNS = [
  "agent_id",
  "local_day",
  "local_hour",
  "local_dow",
  "status",
  "is_transfer",
  "confirmed_by",
  "touched_by_hand",
  "settled_by_hand",
  "lost",
  "montant",
  "fee",
  "proof_delay_s",
  "sim_id",
];
const changed = (columns: string[]) =>
  `(${columns.map((c) => `old.${c}`).join(", ")}) is distinct from (${columns.map((c) => `new.${c}`).join(", ")})`;

function triggers(): string[] {
  const fn = (name: string, call: string, when: (row: string) => string = () => "true") =>
    `create function analytics.${name}_trigger() returns trigger language plpgsql as $$
      begin
        if tg_op in ('UPDATE', 'DELETE') and ${when("old")} then perform analytics.${call}(old, -1); end if;
        if tg_op in ('INSERT', 'UPDATE') and ${when("new")} then perform analytics.${call}(new, 1); end if;
        return null;
      end $$`;
  const pair = (name: string, table: string, columns: string[], when: string) => [
    `create trigger ${name} after insert or delete on analytics.${table}
      for each row execute function analytics.${name}_trigger()`,
    `create trigger ${name}_update after update of ${columns.join(", ")} on analytics.${table}
      for each row when (${when}) execute function analytics.${name}_trigger()`,
  ];
  const msgColumns = ["operation_id", "local_day", "is_ambiguous", "dismissed_at"];
  return [
    fn("agent_rollup", "agent_rollup"),
    ...pair("agent_rollup", "operations", AGENT_COLUMNS, changed(AGENT_COLUMNS)),
    fn("agent_msg_rollup", "agent_msg_rollup", (row) => `${row}.operation_id is not null`),
    ...pair(
      "agent_msg_rollup",
      "messages",
      msgColumns,
      `(old.operation_id, old.local_day, old.is_ambiguous, old.dismissed_at is null) is distinct from
       (new.operation_id, new.local_day, new.is_ambiguous, new.dismissed_at is null)`,
    ),
    fn("op_msg_rollup", "op_msg_rollup"),
    ...pair("op_msg_rollup", "operations", ["operation_id", "agent_id"], changed(["operation_id", "agent_id"])),
  ];
}

/**
 * The same contributions as the triggers', grouped: one pass over the rows per table, with
 * 256 MB of work_mem for the groupings (at the default 4 MB, grouping a million operations per
 * agent, day and SIM spills to disk and takes twice as long, while the consumers' writes wait).
 */
function rebuildAgentRollups(): string {
  return `create function analytics.rebuild_agent_rollups() returns void language sql set work_mem = '256MB' as $$
    truncate analytics.agent_op_daily, analytics.agent_hourly, analytics.agent_sim_daily, analytics.agent_delay_seconds,
      analytics.agent_amount_hist, analytics.agent_amount_daily, analytics.agent_msg_daily;
    insert into analytics.agent_op_daily (agent_id, local_day, status, is_transfer, auto, settled, lost, n, montant, fee,
      fee_n, delay_n)
    select agent_id, local_day, status, is_transfer, ${AUTO("")}, settled_by_hand is not null, lost, count(*),
           sum(montant), coalesce(sum(fee), 0), count(fee), count(proof_delay_s)
    from analytics.operations group by 1, 2, 3, 4, 5, 6, 7;
    insert into analytics.agent_hourly (agent_id, local_day, local_hour, local_dow, n)
    select agent_id, local_day, local_hour, min(local_dow), count(*) from analytics.operations group by 1, 2, 3;
    insert into analytics.agent_sim_daily (agent_id, local_day, sim_id, n)
    select agent_id, local_day, coalesce(sim_id, '${NO_SIM}'), count(*) from analytics.operations group by 1, 2, 3;
    insert into analytics.agent_delay_seconds (agent_id, local_day, bucket, n, sum_s)
    select agent_id, local_day, analytics.delay_bucket(proof_delay_s), count(*), sum(proof_delay_s)
    from analytics.operations where proof_delay_s is not null group by 1, 2, 3;
    insert into analytics.agent_amount_hist (agent_id, local_day, bucket, n)
    select agent_id, local_day, analytics.hist_bucket(montant), count(*) from analytics.operations
    where ${CONFIRMED_TRANSFER("")} group by 1, 2, 3;
    insert into analytics.agent_amount_daily (agent_id, bucket, local_day, montant, n)
    select agent_id, analytics.hist_bucket(montant), local_day, montant, count(*) from analytics.operations
    where ${CONFIRMED_TRANSFER("")} group by 1, 2, 3, 4;
    insert into analytics.agent_msg_daily (agent_id, local_day, n, ambiguous, dismissed)
    select o.agent_id, m.local_day, count(*), count(*) filter (where m.is_ambiguous),
           count(*) filter (where m.dismissed_at is not null)
    from analytics.messages m join analytics.operations o on o.operation_id = m.operation_id group by 1, 2;
  $$`;
}
