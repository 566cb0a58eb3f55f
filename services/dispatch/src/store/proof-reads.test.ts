// The proof's reads that a long history could make dear, against real PostgreSQL: the arbitration
// queue's evidence counts (listUnproven) over many ambiguous proofs, read through the partial
// GIN index, not every ambiguous proof; and the restated reference (answeredBefore) over a SIM's
// many confirmed operations of one amount, read through the reference's index, not every one.

import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type Database } from "@transferops/kit";
import { freshDatabase, type TestDatabase } from "../../../../test/infra/context.ts";
import { planOfLast } from "../../../../test/support/statements.ts";
import { migrations } from "./migrations/index.ts";
import { answeredBefore } from "./proofs.ts";
import { listUnproven } from "./queues.ts";

let tdb: TestDatabase;
let db: Database;
const SIM = randomUUID();
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
  // 20,000 confirmed operations of one SIM, all of one amount, each with its reference.
  await db.em().execute(
    `insert into dispatch.operations (operation_id, request_id, status, origin, op_type, agent_id, operator, montant,
       msisdn_dest, sim_id, evidence_message_id, evidence_operator_ref, created_at)
     select gen_random_uuid(), 'order-' || g, 'confirmed', 'aggregated', 'deposit', ?, 'operator_b', 10000,
       '690000000', ?, 'message-' || g, 'CI261130.' || g, now() - g * interval '1 minute'
     from generate_series(1, 20000) g`,
    [randomUUID(), SIM],
  );
  await db.em().execute(`vacuum analyze dispatch.proofs`);
  await db.em().execute(`vacuum analyze dispatch.operations`);
});
afterAll(async () => {
  await db?.close();
  await tdb?.drop();
});

describe("the arbitration queue's evidence counts", () => {
  it("counts the ambiguous proofs naming each operation, read from the partial GIN index", async () => {
    // The three named operations unproven, and one no proof names.
    const unnamed = randomUUID();
    await db.em().execute(
      `insert into dispatch.operations (operation_id, request_id, status, origin, op_type, agent_id, operator, montant,
         msisdn_dest, sim_id, created_at, started_at, finished_at)
       select id::uuid, 'unproven-' || id, 'no_evidence', 'aggregated', 'deposit', ?, 'operator_b', 5000,
         '690000000', 'sim-2', now(), now(), now()
       from jsonb_array_elements_text(?::jsonb) as id`,
      [randomUUID(), JSON.stringify([...named, unnamed])],
    );
    const { result: page, plan } = await planOfLast(db.em(), () =>
      listUnproven(db.em(), { scope: null, from: null, to: null, limit: 50 }),
    );
    expect(Object.fromEntries(page.map((o) => [o.operation_id, o.ambiguous]))).toEqual({
      [named[0]]: 2,
      [named[1]]: 1,
      [named[2]]: 0,
      [unnamed]: 0,
    });
    expect(plan.some((l) => l.includes("Bitmap Index Scan on proofs_ambiguous"))).toBe(true);
    expect(plan.filter((l) => l.includes("Seq Scan"))).toEqual([]);
  });
});

describe("answeredBefore", () => {
  it("finds the operation a restated reference confirmed, from the reference's index", async () => {
    const restating = { sim_id: SIM, operator_ref: "CI261130.12345", amount: 10000 };
    const {
      result: found,
      plan,
      pages,
    } = await planOfLast(db.em(), () => answeredBefore(db.em(), "message-new", restating));
    expect(found.stored).toBeUndefined();
    expect(found.restated?.request_id).toBe("order-12345");
    // Another amount, or the same message, restates nothing.
    expect((await answeredBefore(db.em(), "message-new", { ...restating, amount: 5000 })).restated).toBeUndefined();
    expect((await answeredBefore(db.em(), "message-12345", restating)).restated).toBeUndefined();
    expect(plan.some((l) => l.includes("operations_sim_operator_ref"))).toBe(true);
    // A few pages in all (the statement's), not the SIM's 20,000 operations of that amount.
    expect(pages).toBeLessThan(20);
  });
});
