// The re-reading after an activation, on PostgreSQL with the dispatch and fleet stand-ins:
// batches resume after a crash, a message is read and proved once, and what confirmed,
// was attached or dismissed is never read again.

import { create } from "@bufbuild/protobuf";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  ActivateWordingRuleRequestSchema,
  AddWordingRuleRequestSchema,
} from "@transferops/kit/gen/transferops/evidence/v1/evidence_service_pb";
import { one, openHarness, session, SIM, type Harness } from "../../../../test/support/evidence-harness.ts";
import { Reread } from "./reread.ts";
import { activateRule, addRule } from "./wording-rules.ts";

let h: Harness;
beforeAll(async () => {
  h = await openHarness();
});
afterAll(async () => {
  await h.close();
});
beforeEach(async () => {
  await h.reset();
});

const OP1 = "00000000-0000-4000-8000-0000000000a1";
const OP2 = "00000000-0000-4000-8000-0000000000a2";
const ADMIN = session("00000000-0000-4000-8000-0000000000ad", "admin");
const TEMPLATE = "Operation KX7 terminee: {amount} credites au client {phone}. Code {ref}. Reste {balance}.";
let seq = 0;
const text = (amount: number, msisdn = "690000001") =>
  `Operation KX7 terminee: ${amount} FCFA credites au client ${msisdn}. Code CI260314.${1000 + ++seq}.B${10_000 + seq}. Reste 250000 FCFA.`;

async function activate(): Promise<string> {
  const draft = await addRule(
    h.deps,
    create(AddWordingRuleRequestSchema, {
      caller: ADMIN,
      operator: "operator_b",
      kind: "DEP",
      language: "fr",
      direction: "out",
      template: TEMPLATE,
    }),
  );
  await activateRule(
    h.deps,
    create(ActivateWordingRuleRequestSchema, { caller: ADMIN, versionId: draft.id }),
    () => {},
  );
  return draft.id;
}

const rows = async (sql: string, params: unknown[] = []) =>
  (await h.db.em().execute(sql, params)) as Record<string, unknown>[];
const state = async (id: string) =>
  (
    await rows(`select reread_state, reread_messages, reread_confirmed from evidence.wording_rules where id = ?`, [id])
  )[0];

describe("re-reading after an activation", () => {
  it("resumes after a crash between batches: each message read once, the proof made once", async () => {
    h.dispatch.add({ operationId: OP1, simId: SIM, montant: 15_137 });
    const ids = [];
    for (const amount of [15_137, 16_241, 17_353, 18_461]) ids.push((await one(h, text(amount))).messageId);
    expect((await rows(`select count(*)::int as n from evidence.messages where outcome = 'orphan'`))[0].n).toBe(4);
    const versionId = await activate();

    // A first replica reads one batch of two, then dies.
    const first = new Reread(h.deps, { intervalMs: 60_000, marginMs: 0, batchSize: 2 });
    expect(await first.pass()).toBe(2);
    expect(await state(versionId)).toMatchObject({ reread_state: "running", reread_messages: "2" });
    // Another picks up where the cursor stands.
    const second = new Reread(h.deps, { intervalMs: 60_000, marginMs: 0, batchSize: 2 });
    expect(await second.pass()).toBe(2);
    expect(await second.pass(new Date(Date.now() + 1000))).toBe(0); // an empty batch past the margin ends it
    expect(await state(versionId)).toEqual({ reread_state: "done", reread_messages: "4", reread_confirmed: "1" });
    expect(await second.pass()).toBe(0);

    const read = await rows(
      `select id, kind, outcome, operation_id, parse_rule from evidence.messages order by stored_at, id`,
    );
    expect(read.map((m) => [m.kind, m.outcome, m.operation_id])).toEqual([
      ["DEP", "confirmed", OP1],
      ["DEP", "orphan", null],
      ["DEP", "orphan", null],
      ["DEP", "orphan", null],
    ]);
    expect(h.dispatch.confirmations).toEqual([{ operationId: OP1, messageId: ids[0], by: "proof" }]);
  });

  it("never reads again a message that confirmed, was attached or dismissed", async () => {
    h.dispatch.add({ operationId: OP2, simId: SIM, montant: 20_000 });
    const dismissed = (await one(h, text(20_000))).messageId;
    await h.db
      .em()
      .execute(
        `update evidence.messages set dismissed_at = now(), dismiss_reason = 'not_ours', dismissed_by = ? where id = ?`,
        [ADMIN.agentId, dismissed],
      );
    const versionId = await activate();
    const reread = new Reread(h.deps, { intervalMs: 60_000, marginMs: 0 });
    await reread.pass();
    await reread.pass(new Date(Date.now() + 1000));
    expect(await state(versionId)).toMatchObject({ reread_state: "done", reread_messages: "0" });
    expect((await rows(`select kind, outcome from evidence.messages where id = ?`, [dismissed]))[0]).toEqual({
      kind: null,
      outcome: "orphan",
    });
    expect(h.dispatch.proveCalls).toHaveLength(0);
  });
});
