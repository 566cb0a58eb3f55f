import { describe, expect, it } from "vitest";
import { freshDatabase } from "../../../../test/infra/context.ts";
import { hasDown, migrateUpDownUp } from "../../../../test/support/migration-down.ts";
import { migrations } from "./migrations/index.ts";

// Each migration with a down() (docs/decisions/history.md, "Migrations on a live history"): its
// down() puts back exactly the schema of the migration before it (pg_dump --schema-only, compared
// line for line), and the migration applies again after it. Fails where pg_dump is missing.

describe("the evidence migrations' down()", () => {
  it("is declared by the migrations of the live history", () => {
    expect(migrations.filter(hasDown).map((m) => m.name)).toEqual(expect.arrayContaining(["Migration0010Autovacuum"]));
  });

  for (const m of migrations.filter(hasDown)) {
    it(`${m.name}: down() restores the schema before it, and the migration applies again`, async () => {
      const tdb = await freshDatabase();
      try {
        const r = await migrateUpDownUp(tdb.url, "evidence", migrations, m.name);
        expect(r.revertedNames).toEqual([m.name]);
        expect(r.applied).not.toEqual(r.before);
        expect(r.reverted).toEqual(r.before);
        expect(r.reapplied).toEqual(r.applied);
      } finally {
        await tdb.drop();
      }
    });
  }
});
