import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, rows, type Database } from "@transferops/kit";
import { freshDatabase, type TestDatabase } from "../../../../test/infra/context.ts";
import { delayPercentile } from "../domain/delay-histogram.ts";
import { migrations } from "./migrations/index.ts";
import { delayBuckets } from "./rollups.ts";

// The proof-delay histogram (Migration0005DelaySeconds): kept by triggers as rows change, filled
// from the rows by the migration on a database that has them, rebuilt by rebuild_rollups(), and
// the percentiles read from it against percentile_cont over the rows.

let tdb: TestDatabase;
let db: Database;

/** Rows of analytics.operations with these proof delays (null: not proven), on `day`. */
async function insertDelays(day: string, delays: (number | null)[]) {
  await db.em().execute(
    `insert into analytics.operations (operation_id, agent_id, op_type, is_transfer, status, montant, created_at,
       local_day, local_dow, local_hour, changed_at, proof_delay_s)
     select gen_random_uuid(), gen_random_uuid(), 'deposit', true, 'confirmed', 1000, ?::date, ?::date, 1, 10, now(), d::double precision
     from jsonb_array_elements_text(?::jsonb) d`,
    [day, day, JSON.stringify(delays)],
  );
}
const histogram = () =>
  db
    .em()
    .execute(`select local_day::text, bucket, n::int, sum_s from analytics.delay_seconds where n <> 0 order by 1, 2`);
const exact = async (p: number, where = "true") =>
  Number(
    (
      await rows<{ v: number }>(
        db.em(),
        `select percentile_cont(${p}) within group (order by proof_delay_s) as v from analytics.operations where ${where}`,
      )
    )[0]!.v,
  );

beforeAll(async () => {
  tdb = await freshDatabase();
  // Migrated up to the rollups before this one, with rows: a history migrated live.
  const before = await openDatabase({ url: tdb.url, schema: "analytics", migrations: migrations.slice(0, 4) });
  db = before;
  await insertDelays("2026-03-01", [10, 30, 90, null, 700.5]);
  await before.close();
  db = await openDatabase({ url: tdb.url, schema: "analytics", migrations });
});
afterAll(async () => {
  await db?.close();
  await tdb?.drop();
});

describe("analytics.delay_seconds", () => {
  it("is filled from the rows already there by its migration", async () => {
    expect(await histogram()).toEqual([
      { local_day: "2026-03-01", bucket: 10, n: 1, sum_s: 10 },
      { local_day: "2026-03-01", bucket: 30, n: 1, sum_s: 30 },
      { local_day: "2026-03-01", bucket: 90, n: 1, sum_s: 90 },
      { local_day: "2026-03-01", bucket: expect.any(Number), n: 1, sum_s: 700.5 },
    ]);
    expect((await histogram()).at(-1)!.bucket).toBeGreaterThan(600);
  });

  it("follows inserts, updates (delay, day) and deletes, and equals a rebuild from the rows", async () => {
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    await insertDelays(
      "2026-03-02",
      Array.from({ length: 400 }, () => (next() < 0.9 ? 3 + 60 * next() : 600 * next() * 3)),
    );
    await insertDelays("2026-03-03", [5, 5, 6, null]);
    await db.em().execute(`update analytics.operations set proof_delay_s = 12.25 where proof_delay_s = 6`);
    await db.em().execute(`update analytics.operations set local_day = '2026-03-04' where proof_delay_s = 12.25`);
    await db
      .em()
      .execute(`update analytics.operations set proof_delay_s = proof_delay_s where local_day = '2026-03-02'`);
    await db.em().execute(`delete from analytics.operations where proof_delay_s = 90`);
    const kept = await histogram();
    await db.em().execute(`select analytics.rebuild_rollups()`);
    const rebuilt = await histogram();
    expect(rebuilt.length).toBeGreaterThan(50);
    expect(kept.map((r: any) => ({ ...r, sum_s: Math.round(r.sum_s * 1e6) }))).toEqual(
      rebuilt.map((r: any) => ({ ...r, sum_s: Math.round(r.sum_s * 1e6) })),
    );
  });

  it("gives percentile_cont from the window's buckets: exact on whole seconds, within a second below 600 s", async () => {
    const day = (d: string) => ({ all: false as const, firstDay: d, lastDay: d });
    const of = async (w: ReturnType<typeof day>, p: number) => delayPercentile(await delayBuckets(db.em(), w), p);
    expect(await of(day("2026-03-03"), 0.5)).toBe(5);
    expect(await of(day("2026-03-01"), 0.5)).toBe(await exact(0.5, "local_day = '2026-03-01'"));
    const window = { all: false as const, firstDay: "2026-03-01", lastDay: "2026-03-04" };
    for (const p of [0.5, 0.9]) {
      const want = await exact(p);
      expect(want).toBeLessThan(600);
      expect(Math.abs((await of(window, p))! - want)).toBeLessThan(1);
    }
    expect(await of(day("2026-02-01"), 0.5)).toBeUndefined();
  });
});
