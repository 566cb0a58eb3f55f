import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { depositConfirmation } from "../../../../services/evidence/src/domain/sms-templates.ts";
import { eventually, type TestSystem } from "../../../../test/support/system.ts";
import { routeSystem } from "../../../../test/support/route-system.ts";
import {
  grantAccess,
  provisionHandset,
  recordBalance,
  type Device,
  type Sim,
} from "../../../../test/support/fleet-fixtures.ts";

// Money at the edges, through the gateway on the whole system: no second payment once an
// operator's proof contradicts a person's decision, a retry only by the parent's owner, and
// a SIM's free balance that holds every debit that may have left since its measurement.

let sys: TestSystem;
let admin: { token: string; agentId: string };
let agent: { token: string; agentId: string };
let outsider: { token: string; agentId: string };
const handsets: { device: Device; sim: Sim }[] = [];

routeSystem(
  {
    prefix: "me",
    env: {
      DEVICE_COOLDOWN_S: "0",
      EVIDENCE_WINDOW_S: "2",
      LATE_EVIDENCE_S: "3600",
      SWEEP_INTERVAL_S: "0.5",
    },
  },
  (s) => ({ sys, admin } = s),
);
beforeAll(async () => {
  agent = await sys.api.createAgent(admin.token, { login: "me-owner", full_name: "Odile Owner" });
  outsider = await sys.api.createAgent(admin.token, { login: "me-outsider" });
  const outsiders = await provisionHandset(sys.api, admin.token, { operators: ["operator_b"], balance: 1_000_000 });
  await grantAccess(sys.api, admin.token, outsider.agentId, {
    simIds: [outsiders.sims[0].simId],
    opTypes: ["deposit"],
  });
});

/** A handset of its own with one operator_b SIM measured at `balance`, granted to the agent. */
async function handset(balance: number): Promise<{ device: Device; sim: Sim }> {
  const { device, sims } = await provisionHandset(sys.api, admin.token, { operators: ["operator_b"], balance });
  handsets.push({ device, sim: sims[0] });
  await grantAccess(sys.api, admin.token, agent.agentId, {
    simIds: handsets.map((h) => h.sim.simId),
    opTypes: ["deposit"],
    maxAmount: 20_000_000,
  });
  return { device, sim: sims[0] };
}

let seq = 0;
const customer = () => `69${String(2_000_000 + ++seq * 37).slice(-7)}`;

async function create(simId: string, amount: number, msisdn: string, o: { parent?: string; agentId?: string } = {}) {
  return sys.api.post("/v1/operations", {
    apiKey: true,
    body: {
      request_id: `me-${randomUUID()}`,
      agent_id: o.agentId ?? agent.agentId,
      operator: "operator_b",
      client: { msisdn, nom: "CLARISSE MBALLA" },
      montant: amount,
      sim_id: simId,
      ...(o.parent ? { parent_operation_id: o.parent } : {}),
    },
  });
}

async function created(simId: string, amount: number, msisdn: string): Promise<string> {
  const res = await create(simId, amount, msisdn);
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return res.body.operation_id;
}

/** The handset claims `operationId` (its only work); `outcome` reported unless null. */
async function claim(device: Device, operationId: string) {
  const next = await sys.api.nextWork(device.token);
  expect(next.status).toBe(200);
  expect(next.body.operation_id).toBe(operationId);
}

async function report(device: Device, operationId: string, outcome: string) {
  const done = await sys.api.post("/v1/device/outcome", {
    token: device.token,
    body: { operation_id: operationId, outcome, ussd_response: "...", executed_at: new Date().toISOString() },
  });
  expect(done.status, JSON.stringify(done.body)).toBe(200);
  return done.body;
}

async function dial(device: Device, operationId: string, outcome: string) {
  await claim(device, operationId);
  return report(device, operationId, outcome);
}

const getOperation = async (id: string) => (await sys.api.get(`/v1/operations/${id}`, { token: admin.token })).body;
const until = (id: string, status: string) =>
  eventually(
    async () => {
      const op = await getOperation(id);
      return op.status === status ? op : undefined;
    },
    20_000,
    `operation ${id} ${status}`,
  );

/** The operator's deposit text of `amount` to `msisdn`, sent by the handset. */
async function proof(h: { device: Device; sim: Sim }, amount: number, msisdn: string, balanceAfter: number) {
  const ref = `CI261128.${String(1000 + seq).slice(-4)}.C${String(10_000 + seq * 11).slice(-5)}`;
  const raw = depositConfirmation("operator_b", {
    amount,
    balanceAfter,
    ref,
    msisdn,
    name: "CLARISSE MBALLA",
    at: new Date(),
    language: "fr",
  });
  const res = await sys.api.post("/v1/device/messages", {
    token: h.device.token,
    body: {
      sim_id: h.sim.simId,
      subscription_slot: 0,
      messages: [{ sender: "OrangeMoney", raw, received_at: new Date().toISOString() }],
    },
  });
  expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
  return { raw, ref };
}

async function notification(kind: string, operationId: string) {
  return eventually(
    async () => {
      const res = await sys.api.get("/v1/admin/notifications?limit=250", { token: admin.token });
      return (res.body as { kind: string; operation_id?: string; message: string; severity: string }[]).find(
        (n) => n.kind === kind && n.operation_id === operationId,
      );
    },
    20_000,
    `a ${kind} notification on ${operationId}`,
  );
}

const settle = (id: string, outcome: "arrived" | "did_not_arrive") =>
  sys.api.post(`/v1/operations/${id}/settle`, {
    token: agent.token,
    body: { outcome, note: `customer says ${outcome}` },
  });

describe("no second payment: an operator's proof after a failure", () => {
  it("links a late proof to an operation settled did_not_arrive, alerts naming who settled it and the text, refuses its retry with 409", async () => {
    const h = await handset(500_000);
    const msisdn = customer();
    const id = await created(h.sim.simId, 7_125, msisdn);
    await dial(h.device, id, "ussd_timeout");
    expect((await settle(id, "did_not_arrive")).status).toBe(200);
    expect((await getOperation(id)).retry_allowed).toBe(true);

    const { raw, ref } = await proof(h, 7_125, msisdn, 492_875);
    const alert = await notification("proof_contradicts_decision", id);
    expect(alert.severity).toBe("critical");
    expect(alert.message).toContain("Odile Owner");
    expect(alert.message).toContain(raw);
    const op = await getOperation(id);
    expect([op.status, op.retry_allowed]).toEqual(["failed", false]);

    const retry = await create(h.sim.simId, 7_125, msisdn, { parent: id });
    expect([retry.status, retry.body.context?.reason]).toEqual([409, "retry_contradicted"]);
    // The arbitration queue shows it first, with the message that contradicts it.
    const queue = await sys.api.get("/v1/operations/unproven?all=true", { token: agent.token });
    expect(queue.status).toBe(200);
    expect(queue.body[0]).toMatchObject({ operation_id: id, status: "failed" });
    expect(queue.body[0].contradicting_message_id).toEqual(expect.any(String));
    // Linked to the operation, not left in the unmatched queue.
    const orphans = await sys.api.get(`/v1/evidences?unmatched=true&all=true`, { token: admin.token });
    expect(orphans.status).toBe(200);
    expect(JSON.stringify(orphans.body)).not.toContain(ref);
    // The status stays the person's word, but the operation changed and says so on the bus:
    // analytics (a consumer of OperationChanged) now knows an operator's message names it.
    await eventually(async () => {
      const [row] = await sys.db.query(`select has_message from analytics.operations where operation_id = $1`, [id]);
      return row?.has_message === true ? true : undefined;
    });
  });

  it("withdraws a retry already queued when the proof of its parent arrives, and names it in the alert", async () => {
    const h = await handset(500_000);
    const msisdn = customer();
    const id = await created(h.sim.simId, 6_250, msisdn);
    await dial(h.device, id, "ussd_timeout");
    expect((await settle(id, "did_not_arrive")).status).toBe(200);
    const retry = await create(h.sim.simId, 6_250, msisdn, { parent: id });
    expect(retry.status).toBe(202);

    await proof(h, 6_250, msisdn, 493_750);
    const alert = await notification("proof_contradicts_decision", id);
    expect(alert.message).toContain(retry.body.operation_id);
    expect((await until(retry.body.operation_id, "rejected")).retry_allowed).toBe(false);
    // Nothing left for the handset to dial.
    const next = await sys.api.get("/v1/device/next", { token: h.device.token });
    expect(next.body?.operation_id).toBeUndefined();
  });
});

describe("no second payment: a parent's late proof after its retry exists", () => {
  // A retry of a no_evidence operation is allowed (the contract asks the board to confirm it
  // first); the parent's text can still arrive. Found by the seeded simulation (seed 42).
  it("withdraws a retry still queued on another SIM when the parent's late proof arrives, and alerts", async () => {
    const h1 = await handset(500_000);
    const h2 = await handset(500_000);
    const msisdn = customer();
    const id = await created(h1.sim.simId, 8_300, msisdn);
    expect((await dial(h1.device, id, "ussd_timeout")).status).toBe("no_evidence");
    const retry = await create(h2.sim.simId, 8_300, msisdn, { parent: id });
    expect(retry.status, JSON.stringify(retry.body)).toBe(202);

    await proof(h1, 8_300, msisdn, 491_700);
    await until(id, "confirmed");
    expect((await until(retry.body.operation_id, "rejected")).retry_allowed).toBe(false);
    const alert = await notification("retry_chain_paid_twice", id);
    expect(alert.message).toContain(retry.body.operation_id);
    const next = await sys.api.get("/v1/device/next", { token: h2.device.token });
    expect(next.body?.operation_id).toBeUndefined();
  });

  it("alerts when the parent is proven after its retry was dialled, and again when the retry is proven too", async () => {
    const h1 = await handset(500_000);
    const h2 = await handset(500_000);
    const msisdn = customer();
    const id = await created(h1.sim.simId, 8_450, msisdn);
    expect((await dial(h1.device, id, "ussd_timeout")).status).toBe("no_evidence");
    const retry = await create(h2.sim.simId, 8_450, msisdn, { parent: id });
    expect(retry.status, JSON.stringify(retry.body)).toBe(202);
    const retryId = retry.body.operation_id as string;
    expect((await dial(h2.device, retryId, "ussd_ok")).status).toBe("awaiting_evidence");

    await proof(h1, 8_450, msisdn, 491_550);
    await until(id, "confirmed");
    const first = await notification("retry_chain_paid_twice", id);
    expect(first.severity).toBe("critical");
    expect(first.message).toContain(retryId);
    expect(first.message).toContain("may have been paid twice");

    await proof(h2, 8_450, msisdn, 491_550);
    await until(retryId, "confirmed");
    const second = await notification("retry_chain_paid_twice", retryId);
    expect(second.message).toContain(id);
    expect(second.message).toContain("was paid twice");
  });
});

describe("no second payment: a parent settled on word after its retry exists", () => {
  // Found by the seeded simulation (seed 42): a no_evidence parent settled arrived while its
  // retry was queued; the retry was then dialled and proven: paid twice, no alert.
  it("withdraws a queued retry when its parent is settled arrived, and alerts naming both", async () => {
    const h1 = await handset(500_000);
    const h2 = await handset(500_000);
    const msisdn = customer();
    const id = await created(h1.sim.simId, 8_600, msisdn);
    expect((await dial(h1.device, id, "ussd_timeout")).status).toBe("no_evidence");
    const retry = await create(h2.sim.simId, 8_600, msisdn, { parent: id });
    expect(retry.status, JSON.stringify(retry.body)).toBe(202);
    expect((await settle(id, "arrived")).status).toBe(200);
    expect((await until(retry.body.operation_id, "rejected")).retry_allowed).toBe(false);
    const alert = await notification("retry_chain_paid_twice", id);
    expect(alert.message).toContain(retry.body.operation_id);
    expect(alert.message).toContain("Odile Owner");
    const next = await sys.api.get("/v1/device/next", { token: h2.device.token });
    expect(next.body?.operation_id).toBeUndefined();
  });

  // Found by the seeded simulation (seed 42, with its intake and admin actors): a parent settled
  // arrived after its retry was proven left two confirmed operations for one transfer.
  it("refuses to confirm on word a parent whose retry was proven (422 for an admin, 409 for an agent), and the parent stays unproven", async () => {
    const h1 = await handset(500_000);
    const h2 = await handset(500_000);
    const msisdn = customer();
    const id = await created(h1.sim.simId, 8_750, msisdn);
    expect((await dial(h1.device, id, "ussd_timeout")).status).toBe("no_evidence");
    const retry = await create(h2.sim.simId, 8_750, msisdn, { parent: id });
    const retryId = retry.body.operation_id as string;
    expect((await dial(h2.device, retryId, "ussd_ok")).status).toBe("awaiting_evidence");
    await proof(h2, 8_750, msisdn, 491_250);
    await until(retryId, "confirmed");
    const arbitrated = await sys.api.post(`/v1/admin/operations/${id}/arbitrate`, {
      token: admin.token,
      body: { decision: "confirmed", note: "the customer's receipt shows it" },
    });
    expect([arbitrated.status, arbitrated.body.code, arbitrated.body.context]).toEqual([
      422,
      "refused",
      expect.objectContaining({
        reason: "arbitration_retry_chain_may_have_paid",
        other_operation_id: retryId,
        other_status: "confirmed",
      }),
    ]);
    const settled = await settle(id, "arrived");
    expect([settled.status, settled.body.code, settled.body.context?.reason]).toEqual([
      409,
      "conflict",
      "retry_chain_may_have_paid",
    ]);
    expect((await getOperation(id)).status).toBe("no_evidence");
    // The word that it did not arrive is taken.
    expect((await settle(id, "did_not_arrive")).status).toBe(200);
  });

  it("refuses to settle arrived a parent whose retry was dialled and is not ended; once the retry is settled, the parent may be", async () => {
    const h1 = await handset(500_000);
    const h2 = await handset(500_000);
    const msisdn = customer();
    const id = await created(h1.sim.simId, 8_810, msisdn);
    expect((await dial(h1.device, id, "ussd_timeout")).status).toBe("no_evidence");
    const retryId = (await create(h2.sim.simId, 8_810, msisdn, { parent: id })).body.operation_id as string;
    expect((await dial(h2.device, retryId, "ussd_timeout")).status).toBe("no_evidence");
    const refused = await settle(id, "arrived");
    expect([refused.status, refused.body.context?.reason, refused.body.context?.other_operation_id]).toEqual([
      409,
      "retry_chain_may_have_paid",
      retryId,
    ]);
    expect((await settle(retryId, "did_not_arrive")).status).toBe(200);
    expect((await settle(id, "arrived")).status).toBe(200);
    expect((await getOperation(id)).status).toBe("confirmed");
  });
});

describe("no second payment: the late receipt of a retry settled on word", () => {
  // Found by the seeded simulation (seed 42): a parent failed on the name check, its retry
  // dialled and settled arrived by an agent before its receipt came; the receipt then
  // contradicted the failed parent (two paid operations from one text and one decision).
  it("proves the retry it belongs to, and leaves the failed parent failed with no contradiction", async () => {
    const h = await handset(500_000);
    const msisdn = customer();
    const id = await created(h.sim.simId, 9_150, msisdn);
    expect((await dial(h.device, id, "name_mismatch")).status).toBe("failed");
    const retryId = (await create(h.sim.simId, 9_150, msisdn, { parent: id })).body.operation_id as string;
    expect((await dial(h.device, retryId, "ussd_ok")).status).toBe("awaiting_evidence");
    await until(retryId, "no_evidence");
    expect((await settle(retryId, "arrived")).status).toBe(200);
    const { ref } = await proof(h, 9_150, msisdn, 490_850);
    const proven = await eventually(
      async () => {
        const op = await getOperation(retryId);
        return op.evidence ? op : undefined;
      },
      20_000,
      "the retry's proof",
    );
    expect([proven.status, proven.evidence.operator_ref]).toEqual(["confirmed", ref]);
    const parent = await getOperation(id);
    expect([parent.status, parent.evidence]).toEqual(["failed", null]);
    const alerts = (await sys.api.get("/v1/admin/notifications?limit=250", { token: admin.token })).body as {
      kind: string;
      operation_id?: string;
    }[];
    expect(alerts.filter((a) => a.operation_id === id || a.operation_id === retryId).map((a) => a.kind)).toEqual([]);
    // It left the settled-on-word list: it has its proof now.
    const onWord = (await sys.api.get("/v1/operations/settled-on-word", { token: admin.token })).body as {
      operation_id: string;
    }[];
    expect(onWord.map((o) => o.operation_id)).not.toContain(retryId);
  });
});

describe("a retry names its parent: only its owner may retry it", () => {
  it("answers another agent's retry 404 without the parent's status; the owner's is accepted", async () => {
    const h = await handset(500_000);
    const msisdn = customer();
    const id = await created(h.sim.simId, 5_375, msisdn);
    await dial(h.device, id, "ussd_failed");
    expect((await getOperation(id)).status).toBe("failed");

    for (const res of [
      await create(h.sim.simId, 5_375, msisdn, { parent: id, agentId: outsider.agentId }),
      await sys.api.post("/v1/operations", {
        token: outsider.token,
        body: {
          request_id: `me-${randomUUID()}`,
          operator: "operator_b",
          client: { msisdn, nom: "CLARISSE MBALLA" },
          montant: 5_375,
          parent_operation_id: id,
        },
      }),
    ]) {
      expect([res.status, res.body.context?.reason]).toEqual([404, "parent_not_found"]);
      expect(JSON.stringify(res.body)).not.toContain("failed");
    }
    expect((await create(h.sim.simId, 5_375, msisdn, { parent: id })).status).toBe(202);
  });
});

describe("a SIM's free balance holds every debit that may have left since its measurement", () => {
  it("treats an operation cancelled while dialling and then reported ussd_ok as dialled: held and alerted", async () => {
    const h = await handset(10_000);
    const id = await created(h.sim.simId, 9_000, customer());
    await claim(h.device, id);
    const cancelled = await sys.api.post(`/v1/operations/${id}/cancel`, { token: agent.token });
    expect(cancelled.body.status).toBe("rejected");
    await report(h.device, id, "ussd_ok");
    const alert = await notification("dialled_after_cancel", id);
    expect(alert.severity).toBe("critical");
    const second = await create(h.sim.simId, 9_000, customer());
    expect([second.status, second.body.context?.reason]).toEqual([422, "insufficient_balance"]);
  });

  it.each<[string, (h: { device: Device; sim: Sim }, id: string) => Promise<unknown>]>([
    ["no_evidence after ussd_timeout", (h, id) => dial(h.device, id, "ussd_timeout")],
    [
      "no_evidence after the sweep",
      async (h, id) => {
        await dial(h.device, id, "ussd_ok");
        await until(id, "no_evidence");
      },
    ],
    [
      "settled arrived with no balance reading since",
      async (h, id) => {
        await dial(h.device, id, "ussd_timeout");
        expect((await settle(id, "arrived")).status).toBe(200);
      },
    ],
    [
      "cancelled while dialling, then reported ussd_ok",
      async (h, id) => {
        await claim(h.device, id);
        await sys.api.post(`/v1/operations/${id}/cancel`, { token: agent.token });
        await report(h.device, id, "ussd_ok");
      },
    ],
  ])(
    "refuses a second 9,000 on a SIM measured at 10,000 while the first is %s; a new reading frees it",
    async (_, first) => {
      const h = await handset(10_000);
      const id = await created(h.sim.simId, 9_000, customer());
      await first(h, id);
      const second = await create(h.sim.simId, 9_000, customer());
      expect([second.status, second.body.context?.reason]).toEqual([422, "insufficient_balance"]);
      // A measurement after it says what the SIM has: the first debit is in it.
      await recordBalance(sys.api, h.sim.simId, 10_000);
      expect((await create(h.sim.simId, 9_000, customer())).status).toBe(202);
    },
  );

  it("refuses an intake transaction's launch that the SIM's debit left in no_evidence would overdraw", async () => {
    // The launch creates its operation through the same gates as POST /v1/operations: the rule
    // is the SIM's, whatever route asks. A launcher granted this SIM alone, so none other fits.
    const h = await handset(10_000);
    const launcher = await sys.api.createAgent(admin.token, { login: `me-launcher-${++seq}` });
    await grantAccess(sys.api, admin.token, launcher.agentId, { simIds: [h.sim.simId], opTypes: ["deposit"] });
    const first = await created(h.sim.simId, 9_000, customer());
    await dial(h.device, first, "ussd_timeout");
    expect((await getOperation(first)).status).toBe("no_evidence");
    const tx = await sys.api.post("/v1/transactions", {
      apiKey: true,
      body: {
        request_id: `me-tx-${randomUUID()}`,
        contact_id: "contact-me",
        receiver_name: "CLARISSE MBALLA",
        receiver_phone: customer(),
        operator: "operator_b",
        received_amount_xaf: 9_000,
      },
    });
    expect(tx.status, JSON.stringify(tx.body)).toBe(201);
    const paid = await sys.api.post(`/v1/transactions/${tx.body.id}/payment-confirmation`, { token: launcher.token });
    expect(paid.status).toBe(200);
    const launched = await sys.api.post(`/v1/transactions/${tx.body.id}/launch`, { token: launcher.token });
    expect([launched.status, launched.body.context?.reason], JSON.stringify(launched.body)).toEqual([
      422,
      "insufficient_balance",
    ]);
    // A measurement after the first debit says what the SIM has: the launch goes.
    await recordBalance(sys.api, h.sim.simId, 10_000);
    const again = await sys.api.post(`/v1/transactions/${tx.body.id}/launch`, { token: launcher.token });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
  });

  it("accepts exactly one of two concurrent creates of 16 million on a SIM measured at 30 million, every time", async () => {
    const h = await handset(30_000_000);
    const matching = (amount: number) =>
      sys.api.post("/v1/operations/matching", {
        token: agent.token,
        body: { beneficiary_msisdn: customer(), montant: amount, sim_id: h.sim.simId },
      });
    const queued = async (amount: number) => create(h.sim.simId, amount, customer());
    const pairs: [string, () => Promise<{ status: number; body: any }>][] = [
      ["create", () => queued(16_000_000)],
      ["matching", () => matching(16_000_000)],
    ];
    for (let round = 0; round < 8; round += 1) {
      // A new reading each round: what the earlier rounds left is in it.
      await recordBalance(sys.api, h.sim.simId, 30_000_000);
      const [a, b] = [pairs[round % 2], pairs[Math.floor(round / 2) % 2]];
      const answers = await Promise.all([a[1](), b[1]()]);
      const accepted = answers.filter((r) => r.status === 201 || r.status === 202);
      const refused = answers.filter((r) => r.status === 422);
      expect(
        accepted,
        `round ${round} (${a[0]} + ${b[0]}): ${JSON.stringify(answers.map((r) => r.body))}`,
      ).toHaveLength(1);
      expect(refused.map((r) => r.body.context?.reason)).toEqual(["insufficient_balance"]);
      // Cancel the accepted one (never dialled: it holds nothing after).
      const op = accepted[0].body;
      const id: string = op.operation_id;
      const cancel =
        op.status === "awaiting_manual_dial" ? `/v1/operations/matching/${id}/cancel` : `/v1/operations/${id}/cancel`;
      expect((await sys.api.post(cancel, { token: agent.token })).status).toBe(200);
    }
  });
});
