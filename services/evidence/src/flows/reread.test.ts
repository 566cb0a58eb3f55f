// The re-readings after an activation and after a retirement, on PostgreSQL with the dispatch
// and fleet stand-ins: batches resume after a crash, a message is read and proved once, what
// confirmed, was attached or dismissed is never read again, and a balance a reading gives or
// takes back reaches the day's counts and fleet as a new message's would.

import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import {
  ActivateWordingRuleRequestSchema,
  AddWordingRuleRequestSchema,
  RetireWordingRuleRequestSchema,
} from "@transferops/kit/gen/transferops/evidence/v1/evidence_service_pb";
import { one, useHarness, session, SIM, submit, type Harness } from "../../../../test/support/evidence-harness.ts";
import { Reread } from "./reread.ts";
import { activateRule, addRule, retireRule } from "./wording-rules.ts";

let h: Harness;
useHarness((opened) => (h = opened));

const OP1 = "00000000-0000-4000-8000-0000000000a1";
const OP2 = "00000000-0000-4000-8000-0000000000a2";
const ADMIN = session("00000000-0000-4000-8000-0000000000ad", "admin");
/** A DEP or BAL rule is activated by an admin other than its author. */
const APPROVER = session("00000000-0000-4000-8000-0000000000ae", "admin");
const TEMPLATE = "Operation KX7 terminee: {amount} credites au client {phone}. Code {ref}. Reste {balance}.";
let seq = 0;
const text = (amount: number, msisdn = "690000001") =>
  `Operation KX7 terminee: ${amount} FCFA credites au client ${msisdn}. Code CI260314.${1000 + ++seq}.B${10_000 + seq}. Reste 250000 FCFA.`;

async function activate(template = TEMPLATE, kind = "DEP"): Promise<string> {
  const draft = await addRule(
    h.deps,
    create(AddWordingRuleRequestSchema, {
      caller: ADMIN,
      operator: "operator_b",
      kind,
      language: "fr",
      direction: kind === "DEP" ? "out" : undefined,
      template,
    }),
  );
  await activateRule(
    h.deps,
    create(ActivateWordingRuleRequestSchema, { caller: APPROVER, versionId: draft.id }),
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

const lastBalance = async () =>
  (await rows(`select last_balance from evidence.daily_reconciliations where sim_id = ?`, [SIM]))[0]?.last_balance;

describe("re-reading after a retirement", () => {
  const at = (s: number) => new Date(Date.now() - 60_000 + s * 1000);
  const kx7 = (amount: number, balance: number, ref: string) =>
    `Operation KX7 terminee: ${amount} FCFA credites au client 690000001. Code ${ref}. Reste ${balance} FCFA.`;

  it("reads what the version read with the remaining rules; what it confirmed keeps its reading and link", async () => {
    h.dispatch.add({ operationId: OP1, simId: SIM, montant: 15_137 });
    const versionId = await activate();
    const [proof] = await submit(h, kx7(15_137, 240_000, "CI260314.2001.B20001"), { receivedAt: at(0) });
    const [orphan] = await submit(h, kx7(16_241, 230_000, "CI260314.2002.B20002"), { receivedAt: at(1) });
    expect([proof.outcome, orphan.outcome]).toEqual(["confirmed", "orphan"]);
    expect(await lastBalance()).toBe("230000");

    await retireRule(h.deps, create(RetireWordingRuleRequestSchema, { caller: ADMIN, versionId }), () => {});
    expect(await state(versionId)).toMatchObject({ reread_state: "running" });
    const reread = new Reread(h.deps, { intervalMs: 60_000, marginMs: 0 });
    expect(await reread.pass()).toBe(1);
    expect(await reread.pass(new Date(Date.now() + 1000))).toBe(0);
    expect(await state(versionId)).toEqual({ reread_state: "done", reread_messages: "1", reread_confirmed: "0" });

    const [p, o] = await rows(
      `select kind, outcome, operation_id, link, amount, balance_after, parse_rule from evidence.messages where id in (?, ?)
        order by received_at`,
      [proof.messageId, orphan.messageId],
    );
    expect(p).toMatchObject({ kind: "DEP", outcome: "confirmed", operation_id: OP1, link: "proof", amount: "15137" });
    expect(p.parse_rule).toMatch(/^taught\.operator_b\./);
    // The built-in rules do not know the wording: the cues read what they can, no kind, no balance.
    expect(o).toMatchObject({
      kind: null,
      outcome: "orphan",
      operation_id: null,
      amount: "16241",
      balance_after: null,
    });
    expect(o.parse_rule).toBe("unrecognised");
    // The balance the retired reading reported is taken back: the day's last is the proof's again.
    expect(await lastBalance()).toBe("240000");
    expect(h.dispatch.confirmations).toEqual([{ operationId: OP1, messageId: proof.messageId, by: "proof" }]);
  });

  it("reads with the other active rules, and a version retired by a newer one's activation is read again too", async () => {
    const first = await activate();
    const [m] = await submit(h, kx7(17_353, 220_000, "CI260314.2003.B20003"), { receivedAt: at(0) });
    const other = await activate(
      "Operation KX7 terminee: {amount} credites au client {phone}. Code {ref}. {any}",
      "DEP",
    );
    const reread = new Reread(h.deps, { intervalMs: 60_000, marginMs: 0 });
    await retireRule(h.deps, create(RetireWordingRuleRequestSchema, { caller: ADMIN, versionId: first }), () => {});
    await reread.pass();
    await reread.pass(new Date(Date.now() + 1000));
    const [read] = await rows(`select kind, amount, balance_after, parse_rule from evidence.messages where id = ?`, [
      m.messageId,
    ]);
    // The other rule's reading (it prints no balance), not the built-in rules' (they know no KX7 wording).
    const [o] = await rows(`select rule_id from evidence.wording_rules where id = ?`, [other]);
    expect(read).toMatchObject({ kind: "DEP", amount: "17353", balance_after: null });
    expect(read.parse_rule).toBe(`taught.operator_b.${String(o.rule_id)}.v1`);
    expect(await state(first)).toMatchObject({ reread_state: "done", reread_messages: "1" });
    expect(await state(other)).toMatchObject({ reread_state: "done" });
  });
});

describe("a balance a re-reading newly reads", () => {
  it("becomes the day's last balance and, proving a balance check, the SIM's balance at fleet, as a new message's", async () => {
    const OP3 = "00000000-0000-4000-8000-0000000000a3";
    h.dispatch.add({ operationId: OP3, simId: SIM, montant: 0, opType: "balance" });
    const text = "Compte KX7: il vous reste 187500 FCFA ce jour.";
    const stored = await one(h, text);
    expect(stored.outcome).toBe("orphan");
    expect(await lastBalance()).toBeNull();
    await activate("Compte KX7: il vous reste {balance} ce jour.", "BAL");
    const reread = new Reread(h.deps, { intervalMs: 60_000, marginMs: 0 });
    expect(await reread.pass()).toBe(1);
    const [m] = await rows(
      `select kind, outcome, operation_id, balance_after, balance_state, balance from evidence.messages`,
    );
    expect(m).toMatchObject({
      kind: "BAL",
      outcome: "confirmed",
      operation_id: OP3,
      balance_after: "187500",
      balance_state: "done",
      balance: "187500",
    });
    expect(await lastBalance()).toBe("187500");
    expect(h.fleet.balanceCalls.map((c) => [c.simId, Number(c.balance), c.source, c.messageId])).toEqual([
      [SIM, 187_500, "balance_check", stored.messageId],
    ]);
  });
});
