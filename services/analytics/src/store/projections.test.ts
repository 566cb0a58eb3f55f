import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, rows, type Database } from "@transferops/kit";
import { freshDatabase, type TestDatabase } from "../../../../test/infra/context.ts";
import { migrations } from "./migrations/index.ts";
import { applyOperation, applyTransaction, type OperationFacts, type TransactionFacts } from "./projections.ts";

// A transaction's read model follows intake's whole state at each change, newest wins: a launch
// released (the transfer never reached the operator) is pending again with nobody's name on it,
// so that a transaction closed or cancelled after it is not counted in the first agent's figures.
// (Found by the simulation's consumer-by-consumer check: the launcher was kept once set.)

let tdb: TestDatabase;
let db: Database;

beforeAll(async () => {
  tdb = await freshDatabase();
  db = await openDatabase({ url: tdb.url, schema: "analytics", migrations, poolMax: 2 });
});
afterAll(async () => {
  await db?.close();
  await tdb?.drop();
});

const facts = (at: string, over: Partial<TransactionFacts>): TransactionFacts => ({
  transaction_id: "00000000-0000-4000-8000-000000000001",
  state: "pending",
  received_amount_xaf: 13100n,
  send_amount_eur: 20,
  rate: 655,
  operation_id: null,
  launched_by: null,
  transaction_date: new Date("2026-03-02T10:00:00Z"),
  local_day: "2026-03-02",
  changed_at: new Date(at),
  ...over,
});

const stored = async () =>
  (
    await rows<{ state: string; launched_by: string | null; operation_id: string | null }>(
      db.em(),
      `select state, launched_by, operation_id from analytics.transactions`,
    )
  )[0];

describe("a transaction's read model", () => {
  it("drops the launcher when the launch is released, keeps the operation once linked, and ignores an older change", async () => {
    const agent = "00000000-0000-4000-a000-000000000001";
    const operation = "00000000-0000-4000-c000-000000000001";
    await db.tx((em) => applyTransaction(em, facts("2026-03-02T10:00:00Z", {})));
    await db.tx((em) => applyTransaction(em, facts("2026-03-02T10:01:00Z", { state: "launched", launched_by: agent })));
    await db.tx((em) => applyTransaction(em, facts("2026-03-02T10:02:00Z", { state: "pending" })));
    expect(await stored()).toEqual({ state: "pending", launched_by: null, operation_id: null });

    await db.tx((em) => applyTransaction(em, facts("2026-03-02T10:05:00Z", { state: "cancelled" })));
    // The launch, delivered late: older than what is stored, it changes nothing.
    await db.tx((em) => applyTransaction(em, facts("2026-03-02T10:01:00Z", { state: "launched", launched_by: agent })));
    expect(await stored()).toEqual({ state: "cancelled", launched_by: null, operation_id: null });

    const second = { transaction_id: "00000000-0000-4000-8000-000000000002" };
    await db.tx((em) =>
      applyTransaction(
        em,
        facts("2026-03-02T11:00:00Z", { ...second, state: "launched", launched_by: agent, operation_id: operation }),
      ),
    );
    const linked = await rows<{ launched_by: string; operation_id: string }>(
      db.em(),
      `select launched_by, operation_id from analytics.transactions where transaction_id = ?`,
      [second.transaction_id],
    );
    expect(linked).toEqual([{ launched_by: agent, operation_id: operation }]);
  });
});

describe("an operation's read model", () => {
  it("takes an edited amount from a newer change, not from an older one", async () => {
    const op = (at: string, montant: bigint): OperationFacts => ({
      operation_id: "00000000-0000-4000-c000-000000000009",
      agent_id: "00000000-0000-4000-a000-000000000001",
      sim_id: null,
      device_id: null,
      device_label: null,
      op_type: "deposit",
      is_transfer: true,
      status: "awaiting_manual_dial",
      montant,
      created_at: new Date("2026-03-02T10:00:00Z"),
      local_day: "2026-03-02",
      local_dow: 1,
      local_hour: 11,
      finished_at: null,
      dialled: false,
      confirmed_by: null,
      touched_by_hand: false,
      has_message: false,
      settled_by_hand: null,
      lost: false,
      fee: null,
      proof_delay_s: null,
      changed_at: new Date(at),
    });
    const amount = async () =>
      (await rows<{ montant: string }>(db.em(), `select montant::text from analytics.operations`))[0]?.montant;
    await db.tx((em) => applyOperation(em, op("2026-03-02T10:00:00Z", 8500n)));
    await db.tx((em) => applyOperation(em, op("2026-03-02T10:01:00Z", 10000n)));
    expect(await amount()).toBe("10000");
    await db.tx((em) => applyOperation(em, op("2026-03-02T10:00:30Z", 8500n)));
    expect(await amount()).toBe("10000");
  });
});
