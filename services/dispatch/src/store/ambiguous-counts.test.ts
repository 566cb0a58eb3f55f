// The arbitration queue's evidence counts (ambiguousCounts) against real PostgreSQL, over many
// ambiguous proofs: each operation's count is the number of ambiguous proofs naming it, and the
// statement reads the proofs through the partial GIN index, not every ambiguous proof.

import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, rows, type Database } from "@transferops/kit";
import { freshDatabase, type TestDatabase } from "../../../../test/infra/context.ts";
import { recordStatements } from "../../../../test/support/statements.ts";
import { migrations } from "./migrations/index.ts";
import { ambiguousCounts } from "./proofs.ts";

let tdb: TestDatabase;
let db: Database;
const named = [randomUUID(), randomUUID(), randomUUID()];
const proof = (outcome: string, candidates: string[]) =>
  db
    .em()
    .execute(
      `insert into dispatch.proofs (message_id, sim_id, outcome, candidate_operation_ids) values (?, 'sim-1', ?, ?::jsonb)`,
      [randomUUID(), outcome, JSON.stringify(candidates)],
    );

beforeAll(async () => {
  tdb = await freshDatabase();
  db = await openDatabase({ url: tdb.url, schema: "dispatch", migrations, poolMax: 2 });
  // 20,000 proofs, one in ten ambiguous between two operations nobody asks about.
  await db.em().execute(
    `insert into dispatch.proofs (message_id, sim_id, outcome, operation_id, candidate_operation_ids)
     select 'm-' || g, 'sim-' || (g % 100), case when g % 10 = 0 then 'ambiguous' else 'confirmed' end,
       case when g % 10 = 0 then null else gen_random_uuid() end,
       case when g % 10 = 0 then jsonb_build_array(gen_random_uuid()::text, gen_random_uuid()::text) else '[]' end
     from generate_series(1, 20000) g`,
  );
  // The first operation named by two ambiguous messages (once beside the second), the second
  // by one; a proof of another outcome naming the third does not count.
  await proof("ambiguous", [named[0], randomUUID()]);
  await proof("ambiguous", [randomUUID(), named[1], named[0]]);
  await proof("no_candidate", [named[2]]);
  await db.em().execute(`vacuum analyze dispatch.proofs`);
});
afterAll(async () => {
  await db?.close();
  await tdb?.drop();
});

describe("ambiguousCounts", () => {
  it("counts the ambiguous proofs naming each operation, read from the partial GIN index", async () => {
    const recorded = recordStatements();
    let counts: Map<string, number>;
    try {
      counts = await ambiguousCounts(db.em(), [...named, randomUUID()]);
    } finally {
      recorded.stop();
    }
    expect(Object.fromEntries(counts)).toEqual({ [named[0]]: 2, [named[1]]: 1 });
    const [sql, params] = [recorded.statements.at(-1)!, recorded.params.at(-1)!];
    const plan = (await rows<{ "QUERY PLAN": string }>(db.em(), `explain (analyze, costs off) ${sql}`, params)).map(
      (r) => r["QUERY PLAN"],
    );
    expect(plan.some((l) => l.includes("Bitmap Index Scan on proofs_ambiguous"))).toBe(true);
    expect(plan.filter((l) => l.includes("Seq Scan"))).toEqual([]);
  });

  it("answers nothing for no operation, without a statement", async () => {
    const recorded = recordStatements();
    try {
      expect((await ambiguousCounts(db.em(), [])).size).toBe(0);
    } finally {
      recorded.stop();
    }
    expect(recorded.statements).toEqual([]);
  });
});
