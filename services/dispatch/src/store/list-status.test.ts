// The operations list by status over a long history, against real PostgreSQL: a status few
// operations are in (the in-flight ones) is answered from an index of that status, not by
// walking the history newest first until a page is found.

import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type Database } from "@transferops/kit";
import { freshDatabase, type TestDatabase } from "../../../../test/infra/context.ts";
import { planOfLast } from "../../../../test/support/statements.ts";
import type { OperationStatus } from "../domain/operation-state.ts";
import { migrations } from "./migrations/index.ts";
import { listOperations } from "./operations.ts";

let tdb: TestDatabase;
let db: Database;
const RARE: OperationStatus[] = ["queued", "running", "awaiting_evidence", "awaiting_manual_dial"];

beforeAll(async () => {
  tdb = await freshDatabase();
  db = await openDatabase({ url: tdb.url, schema: "dispatch", migrations, poolMax: 2 });
  // 20,000 finished operations, then two of each in-flight status, the oldest of all (a page
  // of them cannot fill from the newest rows).
  await db.em().execute(
    `insert into dispatch.operations (operation_id, request_id, status, origin, op_type, agent_id, operator, montant,
       msisdn_dest, sim_id, device_id, evidence_expires_at, created_at)
     select gen_random_uuid(), 'order-' || g,
       case when g > 20000 then (array['queued', 'running', 'awaiting_evidence', 'awaiting_manual_dial'])[(g - 20000 + 1) / 2]
            when g % 10 = 0 then 'failed' else 'confirmed' end,
       'aggregated', 'deposit', ?, 'operator_b', 1000, '690000000', 'sim-' || (g % 100), 'device-' || g,
       now() + interval '5 minutes', now() - g * interval '1 minute'
     from generate_series(1, 20008) g`,
    [randomUUID()],
  );
  await db.em().execute(`vacuum analyze dispatch.operations`);
});
afterAll(async () => {
  await db?.close();
  await tdb?.drop();
});

describe("the operations list by an in-flight status", () => {
  it.each(RARE)("%s: its two operations, from a few pages", async (status) => {
    const {
      result: found,
      plan,
      pages,
    } = await planOfLast(db.em(), () =>
      listOperations(db.em(), {
        status,
        sim_id: null,
        agent_id: null,
        from: null,
        to: null,
        search_text: null,
        search_digits: null,
        limit: 50,
      }),
    );
    expect(found.map((o) => o.status)).toEqual([status, status]);
    // The statement's pages, not the 20,000 operations' (about 900).
    expect([status, pages < 60, plan.join("\n")]).toEqual([status, true, plan.join("\n")]);
  });
});
