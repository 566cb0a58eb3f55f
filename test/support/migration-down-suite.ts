import { describe, expect, it } from "vitest";
import { freshDatabase } from "../infra/context.ts";
import { hasDown, migrateUpDownUp } from "./migration-down.ts";

type Migrations = Parameters<typeof migrateUpDownUp>[2];

/**
 * The test of a service's migrations' down(): each migration with one puts back exactly the
 * schema of the migration before it (pg_dump --schema-only, compared line for line), and the
 * migration applies again after it (docs/decisions/history.md, "Migrations on a live history").
 * `declared`: migrations that must have a down(). Fails where pg_dump is missing.
 */
export function describeMigrationDowns(schema: string, migrations: Migrations, declared: string[]): void {
  describe(`the ${schema} migrations' down()`, () => {
    it("is declared by the migrations of the live history", () => {
      expect(migrations.filter(hasDown).map((m) => m.name)).toEqual(expect.arrayContaining(declared));
    });

    for (const m of migrations.filter(hasDown)) {
      it(`${m.name}: down() restores the schema before it, and the migration applies again`, async () => {
        const tdb = await freshDatabase();
        try {
          const r = await migrateUpDownUp(tdb.url, schema, migrations, m.name);
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
}
