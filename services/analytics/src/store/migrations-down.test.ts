import { describe, expect, it } from "vitest";
import { freshDatabase } from "../../../../test/infra/context.ts";
import { hasDown, migrateUpDownUp } from "../../../../test/support/migration-down.ts";
import { migrations } from "./migrations/index.ts";

// Each migration with a down() (docs/decisions/history.md, "Migrations on a live history"): its
// down() puts back exactly the schema of the migration before it (pg_dump --schema-only, compared
// line for line), and the migration applies again after it. Fails where pg_dump is missing.

/** Operations with proof delays, as a live history has them before Migration0005DelaySeconds. */
const SEED = `insert into analytics.operations (operation_id, agent_id, op_type, is_transfer, status, montant, created_at,
    local_day, local_dow, local_hour, changed_at, proof_delay_s)
  select gen_random_uuid(), gen_random_uuid(), 'deposit', true, 'confirmed', 1000, now(), '2026-03-01'::date + g % 3,
    1, 10, now(), case when g % 5 = 0 then null else (g * 7.5) % 900 end
  from generate_series(1, 300) g`;

/** Rows a migration's down() must put back as they were before it, by migration. */
const DATA: Record<string, string> = {
  // delay_hist, dropped by the migration, refilled from the rows' delays.
  Migration0005DelaySeconds: `select local_day::text, bucket, n::int from analytics.delay_hist order by 1, 2`,
};

describe("the analytics migrations' down()", () => {
  it("is declared by the migrations of the live history", () => {
    expect(migrations.filter(hasDown).map((m) => m.name)).toEqual(
      expect.arrayContaining([
        "Migration0005DelaySeconds",
        "Migration0006AmountCounts",
        "Migration0007AgentRollups",
        "Migration0008DropUnreadIndexes",
        "Migration0009LoadCounts",
        "Migration0010HandsetDaily",
        "Migration0011WaitingMessages",
        "Migration0012HandsetOldest",
        "Migration0013AgentCovering",
        "Migration0014MonthlyRollups",
        "Migration0015AgentSeries",
        "Migration0016AgentDismissed",
      ]),
    );
  });

  for (const m of migrations.filter(hasDown)) {
    it(`${m.name}: down() restores the schema before it and the rows it dropped, and the migration applies again`, async () => {
      const tdb = await freshDatabase();
      try {
        const r = await migrateUpDownUp(tdb.url, "analytics", migrations, m.name, {
          seed: async (db) => void (await db.query(SEED)),
          data: DATA[m.name],
        });
        expect(r.revertedNames).toEqual([m.name]);
        expect(r.applied).not.toEqual(r.before);
        expect(r.reverted).toEqual(r.before);
        if (DATA[m.name]) expect(r.dataBefore.length).toBeGreaterThan(0);
        expect(r.dataAfter).toEqual(r.dataBefore);
        expect(r.reapplied).toEqual(r.applied);
      } finally {
        await tdb.drop();
      }
    });
  }
});
