import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, rows, type Database } from "@transferops/kit";
import { freshDatabase, type TestDatabase } from "../../../../test/infra/context.ts";
import type { Scope } from "../domain/scope.ts";
import { windowParts, type Window } from "../domain/window.ts";
import { agentFilter, and, dayFilter } from "./filters.ts";
import { migrations } from "./migrations/index.ts";
import { MONTHLY_ROLLUPS, monthlyOf, type MonthlyRollup } from "./migrations/Migration0014MonthlyRollups.ts";
import { windowRows } from "./window-rows.ts";

// The rollups' monthly copies (Migration0014MonthlyRollups) against real PostgreSQL: after
// inserts, updates that move operations across months, deletes and a rebuild that truncates the
// daily tables, each copy equals its daily table summed by month; and a window's rows read from
// the copies and the edge days (store/window-rows.ts) sum to what the daily rows of the window
// give, for every rollup, the fleet and each agent, over windows of whole months, of edges only,
// of both, and `all`.

let tdb: TestDatabase;
let db: Database;

const uuid = (prefix: string, n: number) => `00000000-0000-4000-${prefix}-${String(n).padStart(12, "0")}`;
const AGENTS = [1, 2, 3].map((i) => uuid("a000", i));

beforeAll(async () => {
  tdb = await freshDatabase();
  db = await openDatabase({ url: tdb.url, schema: "analytics", migrations, poolMax: 2 });
  const em = db.em();
  await em.execute(`select setseed(0.42)`);
  // 4,000 operations over 14 months (2025-10-01 to 2026-11-30), of three agents, four SIMs and
  // four handsets, in every status; messages and transactions over the same months.
  await em.execute(
    `insert into analytics.operations (operation_id, agent_id, sim_id, device_id, device_label, op_type, is_transfer,
       dialled, status, montant, created_at, finished_at, local_day, local_dow, local_hour, confirmed_by, touched_by_hand,
       settled_by_hand, lost, fee, proof_delay_s, has_message, changed_at)
     select gen_random_uuid(), (?::uuid[])[1 + (g % 3)], case when g % 7 = 0 then null else ('00000000-0000-4000-b000-00000000000' || (g % 4))::uuid end,
       case when g % 9 = 0 then null else 'dev-' || (g % 4) end, 'label ' || (g % 4), case when x.t then 'deposit' else 'balance' end,
       x.t, g % 5 <> 0, x.status, 500 * (1 + (g * 7919) % 60),
       x.d::timestamptz + x.h * interval '1 hour', case when g % 3 <> 0 then x.d::timestamptz + x.h * interval '1 hour' + interval '5 minutes' end,
       x.d, extract(isodow from x.d), x.h,
       case when x.status = 'confirmed' then (array['proof', 'proof', 'attach', 'settle'])[1 + g % 4] end,
       x.status = 'confirmed' and g % 4 >= 2, case when x.status = 'confirmed' and g % 4 = 3 then 'arrived' end,
       x.status = 'failed' and g % 2 = 0, case when g % 3 = 0 then 50 + g % 300 end,
       case when x.status = 'confirmed' and g % 4 < 2 then 3 + (g * 37) % 700 end, g % 4 = 0, now()
     from generate_series(1, 4000) g
     cross join lateral (select '2025-10-01'::date + ((g * 104729) % 426) as d, (g * 31) % 24 as h, g % 10 <> 0 as t,
       (array['confirmed', 'confirmed', 'failed', 'no_evidence', 'rejected', 'awaiting_evidence'])[1 + (g * 13) % 6] as status) x`,
    [`{${AGENTS.join(",")}}`],
  );
  await em.execute(
    `insert into analytics.messages (message_id, sim_id, received_at, local_day, kind, outcome, is_ambiguous, operation_id,
       dismissed_at)
     select gen_random_uuid(), null, d::timestamptz, d, 'DEP', case when o.operation_id is null then 'orphan' else 'confirmed' end,
       g % 10 = 0, o.operation_id, case when g % 8 = 0 then now() end
     from generate_series(1, 1500) g
     cross join lateral (select '2025-10-01'::date + ((g * 7907) % 426) as d) x
     left join lateral (select operation_id from analytics.operations where g % 3 <> 0
       order by operation_id offset g % 4000 limit 1) o on true`,
  );
  await em.execute(
    `insert into analytics.transactions (transaction_id, state, received_amount_xaf, send_amount_eur, rate, launched_by,
       transaction_date, local_day, changed_at)
     select gen_random_uuid(), case when g % 6 = 0 then 'cancelled' else 'delivered' end, 6559 * (1 + g % 20),
       case when g % 4 = 0 then null else 10.0 * (1 + g % 20) end, 655.957, (?::uuid[])[1 + (g % 3)], d::timestamptz, d, now()
     from generate_series(1, 600) g cross join lateral (select '2025-10-01'::date + ((g * 6007) % 426) as d) x`,
    [`{${AGENTS.join(",")}}`],
  );
});
afterAll(async () => {
  await db?.close();
  await tdb?.drop();
});

const keysOf = (r: MonthlyRollup) => r.keys.map(([c]) => c);
const sumsOf = (r: MonthlyRollup) => r.sums.map(([c]) => c);
/** A group's sums as text, `sum_s` and the euros rounded (float and numeric sums in another order). */
const summed = (r: MonthlyRollup, alias = "") =>
  sumsOf(r)
    .map((s) => (s === "sum_s" || s.endsWith("eur") ? `round(sum(${alias}${s})::numeric, 6)` : `sum(${alias}${s})`))
    .join(", ");
const nonZero = (r: MonthlyRollup) =>
  sumsOf(r)
    .map((s) => `sum(${s}) <> 0`)
    .join(" or ");

/** Each copy equals its daily table summed by month (groups summing to zero aside: a copy keeps the rows its days had). */
async function expectCopiesEqualDays() {
  for (const r of MONTHLY_ROLLUPS) {
    const keys = keysOf(r).join(", ");
    const [copy, days] = await Promise.all([
      rows(
        db.em(),
        `select month, ${keys}, ${summed(r)} from analytics.${monthlyOf(r.daily)}
         group by month, ${keys} having ${nonZero(r)} order by 1, ${keys}`,
      ),
      rows(
        db.em(),
        `select date_trunc('month', local_day)::date as month, ${keys}, ${summed(r)} from analytics.${r.daily}
         group by 1, ${keys} having ${nonZero(r)} order by 1, ${keys}`,
      ),
    ]);
    expect([r.daily, copy]).toEqual([r.daily, days]);
    expect([r.daily, days.length > 0]).toEqual([r.daily, true]);
  }
}

const SCOPES: Scope[] = [{ fleet: true }, ...AGENTS.map((agentId) => ({ fleet: false as const, agentId }))];
const WINDOWS: Window[] = [
  { all: true },
  // 365 days: 11 whole months and two edges.
  { all: false, firstDay: "2025-11-29", lastDay: "2026-11-28" },
  // Whole months only.
  { all: false, firstDay: "2025-12-01", lastDay: "2026-11-30" },
  { all: false, firstDay: "2026-03-01", lastDay: "2026-03-31" },
  // A month and edges; edges alone; one day; a window before the rows and past them.
  { all: false, firstDay: "2026-02-15", lastDay: "2026-04-20" },
  { all: false, firstDay: "2026-01-02", lastDay: "2026-01-30" },
  { all: false, firstDay: "2026-06-30", lastDay: "2026-06-30" },
  { all: false, firstDay: "2025-08-01", lastDay: "2027-01-31" },
];

/** Every rollup's window, grouped by its keys: through the copies, and from the daily rows alone. */
async function expectWindowsEqualDays() {
  let compared = 0;
  for (const r of MONTHLY_ROLLUPS) {
    const keys = keysOf(r).join(", ");
    for (const scope of SCOPES) {
      if (!scope.fleet && !r.agent) continue;
      for (const w of WINDOWS) {
        const through = windowRows(r.daily, scope, w);
        const days = and(r.agent ? agentFilter(scope, r.agent) : { sql: "", params: [] }, dayFilter(w));
        const [read, truth] = await Promise.all([
          rows(
            db.em(),
            `select ${keys}, ${summed(r)} from ${through.sql} group by ${keys} having ${nonZero(r)} order by ${keys}`,
            through.params,
          ),
          rows(
            db.em(),
            `select ${keys}, ${summed(r)} from analytics.${r.daily} where ${days.sql}
             group by ${keys} having ${nonZero(r)} order by ${keys}`,
            days.params,
          ),
        ]);
        expect([r.daily, scope, w, read]).toEqual([r.daily, scope, w, truth]);
        if (truth.length > 0) compared += 1;
      }
    }
  }
  // Most rollup, scope and window triples have rows (not a comparison of empty sets).
  expect(compared).toBeGreaterThan(150);
}

describe("the rollups' monthly copies", () => {
  it("equal their daily tables summed by month after inserts", async () => {
    await expectCopiesEqualDays();
    await expectWindowsEqualDays();
  });

  it("follow updates that move operations across months, deletes, and a rebuild that truncates the days", async () => {
    const em = db.em();
    await em.execute(`update analytics.operations set local_day = local_day + 40, local_dow = extract(isodow from local_day + 40)
      where operation_id in (select operation_id from analytics.operations order by operation_id limit 300)`);
    await em.execute(`update analytics.operations set status = 'confirmed', confirmed_by = 'proof', proof_delay_s = 42
      where status = 'no_evidence' and local_hour < 6`);
    await em.execute(
      `update analytics.operations set agent_id = ?, device_label = 'relabelled'
      where local_hour between 10 and 12`,
      [AGENTS[0]],
    );
    await em.execute(`delete from analytics.operations where local_hour = 23`);
    await em.execute(
      `update analytics.messages set dismissed_at = now(), is_ambiguous = true where local_day < '2026-02-01'`,
    );
    await em.execute(`delete from analytics.messages where local_day between '2026-05-01' and '2026-05-10'`);
    await em.execute(`update analytics.transactions set state = 'cancelled', local_day = local_day - 31
      where received_amount_xaf > 100000`);
    await expectCopiesEqualDays();
    await expectWindowsEqualDays();
    await em.execute(`select analytics.rebuild_rollups()`);
    await expectCopiesEqualDays();
    await expectWindowsEqualDays();
  });

  it("are summed again in one pass from their daily tables as their triggers kept them", async () => {
    const copies = async () =>
      Promise.all(
        MONTHLY_ROLLUPS.map((r) =>
          rows(
            db.em(),
            `select month, ${keysOf(r).join(", ")}, ${summed(r)} from analytics.${monthlyOf(r.daily)}
             group by month, ${keysOf(r).join(", ")} having ${nonZero(r)} order by 1, ${keysOf(r).join(", ")}`,
          ),
        ),
      );
    const kept = await copies();
    await db.em().execute(`select analytics.rebuild_monthly_rollups()`);
    expect(await copies()).toEqual(kept);
  });

  it("read a year's window as at most 12 months and two edges of the daily table", () => {
    const sql = windowRows(
      "agent_sim_daily",
      { fleet: false, agentId: AGENTS[0]! },
      {
        all: false,
        firstDay: "2025-11-29",
        lastDay: "2026-11-28",
      },
    );
    expect(sql.sql.match(/from analytics\.agent_sim_daily_monthly /g)).toHaveLength(1);
    expect(sql.sql.match(/from analytics\.agent_sim_daily /g)).toHaveLength(2);
    expect(sql.params).toEqual([
      AGENTS[0],
      "2025-11-29",
      "2025-11-30",
      AGENTS[0],
      "2026-11-01",
      "2026-11-28",
      AGENTS[0],
      "2025-12-01",
      "2026-10-01",
    ]);
    expect(windowParts({ all: false, firstDay: "2025-11-29", lastDay: "2026-11-28" })).toMatchObject({
      months: { first: "2025-12-01", last: "2026-10-01" },
    });
  });
});
