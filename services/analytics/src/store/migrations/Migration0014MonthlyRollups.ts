import { Migration } from "@transferops/kit";
import { FIGURES } from "./Migration0010HandsetDaily.ts";

/** A per-day rollup and what its monthly copy keeps: its keys besides the day, and its sums. */
export interface MonthlyRollup {
  /** The per-day table, in the analytics schema. */
  daily: string;
  /** Its agent column, when a scope's rows are one agent's. */
  agent?: string;
  /** Its columns besides `local_day` and the sums, with their types, in the primary key's order. */
  keys: [string, string][];
  /** Where `month` goes among the keys in the monthly primary key (the daily key's place for `local_day`). */
  monthAt: number;
  sums: [string, string][];
}

const COUNT = "bigint";
const OP_KEYS: [string, string][] = [
  ["status", "text"],
  ["is_transfer", "boolean"],
  ["auto", "boolean"],
  ["settled", "boolean"],
  ["lost", "boolean"],
];
const OP_SUMS: [string, string][] = ["n", "montant", "fee", "fee_n", "delay_n"].map((c) => [c, COUNT]);
const HANDSET_SUMS: [string, string][] = FIGURES.map((c) => [c, COUNT]);
const DELAY_SUMS: [string, string][] = [
  ["n", COUNT],
  ["sum_s", "double precision"],
];
const N: [string, string][] = [["n", COUNT]];
const AGENT: [string, string] = ["agent_id", "uuid"];

/**
 * Every per-day rollup a report reads over a window (store/rollups.ts, store/report.ts), and its
 * monthly copy's shape. `op_hourly`'s weekday is a key of the month (a day's weekday is its own;
 * a month has each weekday several times).
 */
export const MONTHLY_ROLLUPS: readonly MonthlyRollup[] = [
  { daily: "op_daily", keys: OP_KEYS, monthAt: 0, sums: OP_SUMS },
  { daily: "agent_op_daily", agent: "agent_id", keys: [AGENT, ...OP_KEYS], monthAt: 1, sums: OP_SUMS },
  { daily: "agent_daily", agent: "agent_id", keys: [AGENT], monthAt: 0, sums: [...N, ["value_xaf", COUNT]] },
  {
    daily: "op_hourly",
    keys: [
      ["local_dow", "smallint"],
      ["local_hour", "smallint"],
    ],
    monthAt: 0,
    sums: N,
  },
  {
    daily: "agent_hourly",
    agent: "agent_id",
    keys: [AGENT, ["local_dow", "smallint"], ["local_hour", "smallint"]],
    monthAt: 1,
    sums: N,
  },
  { daily: "op_sim_daily", keys: [["sim_id", "uuid"]], monthAt: 0, sums: N },
  { daily: "agent_sim_daily", agent: "agent_id", keys: [AGENT, ["sim_id", "uuid"]], monthAt: 1, sums: N },
  { daily: "amount_hist", keys: [["bucket", "int"]], monthAt: 0, sums: N },
  { daily: "agent_amount_hist", agent: "agent_id", keys: [AGENT, ["bucket", "int"]], monthAt: 1, sums: N },
  // A bucket's amounts are one range of the key, as in the daily table.
  {
    daily: "amount_daily",
    keys: [
      ["bucket", "int"],
      ["montant", COUNT],
    ],
    monthAt: 1,
    sums: N,
  },
  {
    daily: "agent_amount_daily",
    agent: "agent_id",
    keys: [AGENT, ["bucket", "int"], ["montant", COUNT]],
    monthAt: 2,
    sums: N,
  },
  { daily: "delay_seconds", keys: [["bucket", "int"]], monthAt: 0, sums: DELAY_SUMS },
  { daily: "agent_delay_seconds", agent: "agent_id", keys: [AGENT, ["bucket", "int"]], monthAt: 1, sums: DELAY_SUMS },
  {
    daily: "msg_daily",
    keys: [["sim_id", "uuid"]],
    monthAt: 0,
    sums: [...N, ["ambiguous", COUNT]],
  },
  {
    daily: "agent_msg_daily",
    agent: "agent_id",
    keys: [AGENT],
    monthAt: 1,
    sums: [...N, ["ambiguous", COUNT], ["dismissed", COUNT]],
  },
  {
    daily: "tx_daily",
    agent: "launched_by",
    keys: [
      ["launched_by", "uuid"],
      ["cancelled", "boolean"],
    ],
    monthAt: 0,
    sums: [
      ["xaf", COUNT],
      ["eur", "numeric"],
      ["rate_xaf", COUNT],
      ["rate_eur", "numeric"],
    ],
  },
  {
    daily: "handset_daily",
    keys: [
      ["device_id", "text"],
      ["label", "text"],
    ],
    monthAt: 0,
    sums: HANDSET_SUMS,
  },
  {
    daily: "agent_handset_daily",
    agent: "agent_id",
    keys: [AGENT, ["device_id", "text"], ["label", "text"]],
    monthAt: 1,
    sums: HANDSET_SUMS,
  },
];

export const monthlyOf = (daily: string) => `${daily}_monthly`;

/**
 * An agent's rows are written month after month among every agent's, so they lie about a row a
 * heap page: a copy keyed by agent first carries its sums in its primary key (`include`), and an
 * agent's year is read from the index alone, a few pages (as Migration0013AgentCovering did for
 * the daily tables: through the heap an agent's active SIMs read 526 pages for 1,200 rows at
 * 1,000,000 operations over a year).
 */
const agentLed = (r: MonthlyRollup) => r.monthAt > 0 && r.keys[0]?.[0] === r.agent;

/** The monthly table's primary key: the daily keys with `month` where the day was. */
const monthlyKey = (r: MonthlyRollup) => {
  const keys = r.keys.map(([c]) => c);
  return [...keys.slice(0, r.monthAt), "month", ...keys.slice(r.monthAt)];
};

/**
 * The upsert of a daily row's change into its month, keyed by `row`'s month and keys, adding
 * `value` of each sum: `new`'s, `old`'s negated, or their difference when an update keeps the
 * row in its month and keys.
 */
function upsert(r: MonthlyRollup, row: "old" | "new", value: (sum: string) => string): string {
  const keys = r.keys.map(([c]) => c);
  const sums = r.sums.map(([c]) => c);
  return `insert into analytics.${monthlyOf(r.daily)} as m (month, ${[...keys, ...sums].join(", ")})
          values (date_trunc('month', ${row}.local_day)::date, ${[...keys.map((k) => `${row}.${k}`), ...sums.map(value)].join(", ")})
          on conflict (${monthlyKey(r).join(", ")}) do update set ${sums.map((s) => `${s} = m.${s} + excluded.${s}`).join(", ")}`;
}

/** A monthly copy emptied and summed again from its daily table (set-based: a bulk load's rollups). */
function refill(r: MonthlyRollup): string {
  const keys = r.keys.map(([c]) => c);
  const sums = r.sums.map(([c]) => c);
  return `delete from analytics.${monthlyOf(r.daily)};
      insert into analytics.${monthlyOf(r.daily)} (month, ${[...keys, ...sums].join(", ")})
      select date_trunc('month', local_day)::date, ${[...keys, ...sums.map((s) => `sum(${s})`)].join(", ")}
      from analytics.${r.daily} group by date_trunc('month', local_day), ${keys.join(", ")}`;
}

/**
 * An analytics report over a window read a row per day of the window in each per-day rollup
 * (and per SIM, hour, handset, agent, status or amount): up to 365 days of them, so up to a year
 * its reads grew with the history (docs/decisions/history.md, "Monthly rollups"). Each per-day
 * rollup of MONTHLY_ROLLUPS gets a copy by calendar month (`<daily>_monthly`: the same keys, the
 * day's place taken by its month's first day, the sums of the month's days), kept by a row
 * trigger on the daily table in the transaction of each change (so it equals the sum of its
 * days whatever writes them: the consumers' triggers on operations and messages, a replay, a
 * test's delete). A window reads the months it holds whole from the copies and its edge days
 * from the daily tables (store/window-rows.ts): a year is 11 or 12 months and at most 61 days,
 * whatever the days behind them.
 *
 * On a live history: `create trigger` takes SHARE ROW EXCLUSIVE on each daily table (reads go
 * on; the consumers' writes, which change the daily tables, wait) until the migration commits,
 * and each copy is filled from its daily table in that transaction (the daily rows, a few per
 * day, not the operations). `down()` drops the triggers, their functions and the copies.
 */
export class Migration0014MonthlyRollups extends Migration {
  override name = "Migration0014MonthlyRollups";

  up(): void {
    for (const r of MONTHLY_ROLLUPS) {
      const monthly = monthlyOf(r.daily);
      const keys = r.keys.map(([c]) => c);
      this.addSql(`create table analytics.${monthly} (
        month date not null,
        ${[...r.keys, ...r.sums].map(([c, t]) => `${c} ${t} not null`).join(",\n        ")},
        primary key (${monthlyKey(r).join(", ")})${agentLed(r) ? ` include (${r.sums.map(([c]) => c).join(", ")})` : ""})`);
      this.addSql(`comment on table analytics.${monthly} is
        'analytics.${r.daily} summed by calendar month, kept by its trigger (Migration0014MonthlyRollups)'`);
      const same = ["date_trunc('month', old.local_day)", ...keys.map((k) => `old.${k}`)];
      const sameNew = ["date_trunc('month', new.local_day)", ...keys.map((k) => `new.${k}`)];
      this.addSql(`create function analytics.${monthly}_keep() returns trigger language plpgsql as $$
        begin
          if tg_op = 'UPDATE' and (${same.join(", ")}) is not distinct from (${sameNew.join(", ")}) then
            ${upsert(r, "new", (s) => `new.${s} - old.${s}`)};
            return null;
          end if;
          if tg_op in ('UPDATE', 'DELETE') then
            ${upsert(r, "old", (s) => `-old.${s}`)};
          end if;
          if tg_op in ('INSERT', 'UPDATE') then
            ${upsert(r, "new", (s) => `new.${s}`)};
          end if;
          return null;
        end $$`);
      this.addSql(`create trigger ${monthly}_keep after insert or update or delete on analytics.${r.daily}
        for each row execute function analytics.${monthly}_keep()`);
      this.addSql(`create function analytics.${monthly}_clear() returns trigger language plpgsql as $$
        begin
          delete from analytics.${monthly};
          return null;
        end $$`);
      this.addSql(`create trigger ${monthly}_clear after truncate on analytics.${r.daily}
        for each statement execute function analytics.${monthly}_clear()`);
    }
    this.addSql(`create function analytics.rebuild_monthly_rollups() returns void language sql as $$
      ${MONTHLY_ROLLUPS.map(refill).join(";\n      ")};
    $$`);
    this.addSql(`select analytics.rebuild_monthly_rollups()`);
  }

  override down(): void {
    this.addSql(`drop function analytics.rebuild_monthly_rollups()`);
    for (const r of MONTHLY_ROLLUPS) {
      const monthly = monthlyOf(r.daily);
      this.addSql(`drop trigger ${monthly}_keep on analytics.${r.daily}`);
      this.addSql(`drop trigger ${monthly}_clear on analytics.${r.daily}`);
      this.addSql(`drop function analytics.${monthly}_keep(), analytics.${monthly}_clear()`);
      this.addSql(`drop table analytics.${monthly}`);
    }
  }
}
