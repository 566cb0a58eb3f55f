import { Migration, type ConcurrentIndex } from "@transferops/kit";

/** A row the unproven-by-handset report reads: a transfer that dialled. */
const DIALLED = (r: string) => `${r}is_transfer and ${r}dialled`;
/** Its figures, as store/report.ts `unprovenByHandset` sums them (true or false, never null: a 0 or 1 each). */
const UNPROVEN = (r: string) =>
  `(${r}status = 'no_evidence' or (${r}settled_by_hand is not null and not ${r}has_message))`;
const WAITING = (r: string) => `${r}status = 'no_evidence'`;
const SETTLED_ARRIVED = (r: string) =>
  `(${r}status = 'confirmed' and ${r}settled_by_hand in ('arrived', 'confirmed') and not ${r}has_message) is true`;
const SETTLED_NOT_ARRIVED = (r: string) =>
  `(${r}status = 'failed' and ${r}settled_by_hand in ('did_not_arrive', 'failed')) is true`;

/** What the table reads of a row: an update that changes none of it fires nothing. */
const COLUMNS = [
  "agent_id",
  "local_day",
  "device_id",
  "device_label",
  "is_transfer",
  "dialled",
  "status",
  "settled_by_hand",
  "has_message",
  "montant",
];

/**
 * `GET /v1/analytics/unproven-by-handset` (store/report.ts `unprovenByHandset`) grouped every
 * dialled transfer of its window by device: 94,952 rows, 2,692 buffers, 178 ms for the fleet's
 * 365 days on a 100,000-operation history (docs/decisions/history.md, "Not bounded yet"). Its
 * sums are now kept per local day, device and label, as the other rollups are
 * (Migration0007AgentRollups): `handset_daily` for the fleet (rows per day and handset, whatever
 * the agents), `agent_handset_daily` per agent (an agent's view reads its own rows, a range of
 * the primary key: rows per day and handset it used). Never a row per operation.
 *
 * - The device is `coalesce(device_id, '')` (the report's own: a deleted device is `''`).
 * - The label: the report shows the devices table's label, else the operations' max
 *   `device_label`. A max cannot be taken back by a delete, so the label is part of the key
 *   (`''` for none): the report takes the max over the window's rows still counting a transfer
 *   (`dialled > 0`), which is the operations' max. A device keeps one label in practice: a row.
 * - `oldest_waiting` (a min) is not kept: it is read, for the handsets of the answer only, from
 *   `operations_device_waiting`, a partial index of the waiting dialled transfers by device and
 *   day (time, device and agent included: an index-only read), built concurrently after this
 *   migration (SHARE UPDATE EXCLUSIVE: the consumers' writes go on). Per handset it reads that
 *   handset's waiting entries of the window (an agent's filtered from them): its backlog, never
 *   its history. Keyed by day, not time: the route's generic plan (parameters for the days) took a
 *   time-ordered walk for unselective and joined `operations_day` instead, the window's every
 *   operation per handset (7.2 s at 300,000).
 *
 * Kept by triggers in the statement that changes a row; an update that changes no column it
 * reads fires nothing. `rebuild_rollups()` rebuilds it (`rebuild_handset_daily()`).
 *
 * On a live history: `create trigger` takes SHARE ROW EXCLUSIVE on analytics.operations until
 * this migration commits; the fill is one grouped pass over the operations (a seq scan: the
 * dialled transfers are most of them) in that time. The consumers' writes wait that long, the
 * routes' reads go on (7.4 to 13.2 s at 300,000 operations: docs/decisions/history.md, "Unproven by handset: rollups per day and handset").
 *
 * `down()` puts back the schema of Migration0009LoadCounts exactly (its `rebuild_rollups()`, to
 * the space; the test compares the schema dumps); its `drop trigger`s and `drop index` take
 * ACCESS EXCLUSIVE on analytics.operations until the commit that follows.
 */
export class Migration0010HandsetDaily extends Migration {
  override name = "Migration0010HandsetDaily";

  static readonly concurrentIndexes: readonly ConcurrentIndex[] = [
    {
      name: "operations_device_waiting",
      on: `analytics.operations (coalesce(device_id, ''), local_day) include (finished_at, created_at, device_id, agent_id)
        where ${WAITING("")} and ${DIALLED("")}`,
    },
  ];

  up(): void {
    this.addSql(`create table analytics.handset_daily (
      local_day date not null,
      device_id text not null,
      label text not null,
      ${FIGURES.map((c) => `${c} bigint not null`).join(",\n      ")},
      primary key (local_day, device_id, label)
    )`);
    this.addSql(`create table analytics.agent_handset_daily (
      agent_id uuid not null,
      local_day date not null,
      device_id text not null,
      label text not null,
      ${FIGURES.map((c) => `${c} bigint not null`).join(",\n      ")},
      primary key (agent_id, local_day, device_id, label)
    )`);
    this.addSql(`create function analytics.handset_rollup(r analytics.operations, s int) returns void language sql as $$
      ${contribution("handset_daily", [], "r.")};
      ${contribution("agent_handset_daily", ["agent_id"], "r.")};
    $$`);
    this.addSql(`create function analytics.handset_rollup_trigger() returns trigger language plpgsql as $$
      begin
        if tg_op in ('UPDATE', 'DELETE') then perform analytics.handset_rollup(old, -1); end if;
        if tg_op in ('INSERT', 'UPDATE') then perform analytics.handset_rollup(new, 1); end if;
        return null;
      end $$`);
    this.addSql(`create trigger handset_rollup after insert or delete on analytics.operations
      for each row execute function analytics.handset_rollup_trigger()`);
    this.addSql(`create trigger handset_rollup_update after update of ${COLUMNS.join(", ")} on analytics.operations
      for each row when ((${COLUMNS.map((c) => `old.${c}`).join(", ")}) is distinct from (${COLUMNS.map((c) => `new.${c}`).join(", ")}))
      execute function analytics.handset_rollup_trigger()`);
    this
      .addSql(`create function analytics.rebuild_handset_daily() returns void language sql set work_mem = '256MB' as $$
      truncate analytics.handset_daily, analytics.agent_handset_daily;
      ${grouped("handset_daily", [])};
      ${grouped("agent_handset_daily", ["agent_id"])};
    $$`);
    this.addSql(`select analytics.rebuild_handset_daily()`);
    this.addSql(`analyze analytics.handset_daily, analytics.agent_handset_daily`);
    this.addSql(`create or replace function analytics.rebuild_rollups() returns void language sql as $$
      select analytics.rebuild_day_rollups();
      select analytics.rebuild_amount_counts();
      select analytics.rebuild_agent_rollups();
      select analytics.rebuild_load_counts();
      select analytics.rebuild_handset_daily();
    $$`);
  }

  override down(): void {
    this.addSql(`drop index if exists analytics.operations_device_waiting`);
    // Migration0009LoadCounts' text, to the space.
    this.addSql(`create or replace function analytics.rebuild_rollups() returns void language sql as $$
      select analytics.rebuild_day_rollups();
      select analytics.rebuild_amount_counts();
      select analytics.rebuild_agent_rollups();
      select analytics.rebuild_load_counts();
    $$`);
    this.addSql(`drop function analytics.rebuild_handset_daily()`);
    this.addSql(`drop trigger handset_rollup_update on analytics.operations`);
    this.addSql(`drop trigger handset_rollup on analytics.operations`);
    this.addSql(`drop function analytics.handset_rollup_trigger()`);
    this.addSql(`drop function analytics.handset_rollup(analytics.operations, int)`);
    this.addSql(`drop table analytics.handset_daily, analytics.agent_handset_daily`);
  }
}

/** The handset rollups' sums (also their monthly copies', Migration0014MonthlyRollups). */
export const FIGURES = [
  "dialled",
  "unproven",
  "unproven_xaf",
  "waiting",
  "waiting_xaf",
  "settled_arrived",
  "settled_not_arrived",
];

/** A row's contribution (s = 1 or -1) to a table keyed by `keys`, local day, device and label. */
function contribution(table: string, keys: string[], r: string): string {
  const key = [...keys, "local_day", "device_id", "label"];
  return `insert into analytics.${table} as h (${[...key, ...FIGURES].join(", ")})
      select ${keys.map((k) => `${r}${k}, `).join("")}${r}local_day, coalesce(${r}device_id, ''), coalesce(${r}device_label, ''), s,
        s * ${UNPROVEN(r)}::int, s * ${r}montant * ${UNPROVEN(r)}::int,
        s * (${WAITING(r)})::int, s * ${r}montant * (${WAITING(r)})::int,
        s * (${SETTLED_ARRIVED(r)})::int, s * (${SETTLED_NOT_ARRIVED(r)})::int
      where ${DIALLED(r)}
      on conflict (${key.join(", ")}) do update
        set ${FIGURES.map((c) => `${c} = h.${c} + excluded.${c}`).join(", ")}`;
}

/**
 * The same contributions, grouped: one pass over the dialled transfers, written in the order the
 * reads take them (an agent's days together, not one row per page).
 */
function grouped(table: string, keys: string[]): string {
  return `insert into analytics.${table} (${[...keys, "local_day", "device_id", "label", ...FIGURES].join(", ")})
      select ${keys.map((k) => `${k}, `).join("")}local_day, coalesce(device_id, ''), coalesce(device_label, ''), count(*),
        count(*) filter (where ${UNPROVEN("")}), coalesce(sum(montant) filter (where ${UNPROVEN("")}), 0),
        count(*) filter (where ${WAITING("")}), coalesce(sum(montant) filter (where ${WAITING("")}), 0),
        count(*) filter (where ${SETTLED_ARRIVED("")}), count(*) filter (where ${SETTLED_NOT_ARRIVED("")})
      from analytics.operations where ${DIALLED("")}
      group by ${[...keys, "local_day", "device_id", "label"].map((_, i) => i + 1).join(", ")}
      order by ${[...keys, "local_day"].map((_, i) => i + 1).join(", ")}`;
}
