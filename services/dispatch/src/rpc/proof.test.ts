import { randomUUID } from "node:crypto";
import { fromBinary, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AlertRaisedSchema } from "@transferops/kit/gen/transferops/common/v1/alerts_pb";
import type { ProveOperationRequestSchema } from "@transferops/kit/gen/transferops/dispatch/v1/dispatch_service_pb";
import {
  apiKey,
  eventsOf,
  eventually,
  refusalOf,
  session,
  startDispatchHarness,
  type DispatchHarness,
} from "../../../../test/support/dispatch-harness.ts";
import { recordStatements } from "../../../../test/support/statements.ts";

let h: DispatchHarness;
const agent = randomUUID();
const other = randomUUID();
const supervisor = randomUUID();

beforeAll(async () => {
  h = await startDispatchHarness({ LATE_EVIDENCE_S: "3600", EVIDENCE_WINDOW_S: "600" });
  h.fleet.addAgent(agent);
  h.fleet.addAgent(other);
  h.fleet.addAgent(supervisor, { role: "supervisor" });
});
afterAll(async () => {
  await h?.stop();
});

/** A SIM of its own (so candidates never mix between tests). */
function sim(): string {
  const simId = randomUUID();
  h.fleet.addSim({ sim_id: simId, operator: "operator_b", device_id: `dev-${simId.slice(0, 6)}` });
  h.fleet.grant(agent, { allowed_sim_ids: [...(h.fleet.grants.get(agent)?.allowed_sim_ids ?? []), simId] });
  return simId;
}

async function operation(
  simId: string,
  o: { amount?: number; type?: string; status?: string; finishedAgoS?: number; msisdn?: string } = {},
): Promise<string> {
  const res = await h.client.createOperation({
    caller: apiKey(),
    agentId: agent,
    requestId: randomUUID(),
    operator: "operator_b",
    clientMsisdn: o.msisdn ?? "690000001",
    clientNom: "Jean Dupont",
    montant: BigInt(o.amount ?? 5000),
    typeOp: o.type ?? "deposit",
    simId,
  });
  const id = res.operation!.operationId;
  if (o.status) {
    await h.query(
      `update dispatch.operations set status = $2, finished_at = now() - make_interval(secs => $3) where operation_id = $1`,
      [id, o.status, o.finishedAgoS ?? 0],
    );
  }
  return id;
}

type Prove = Omit<MessageInitShape<typeof ProveOperationRequestSchema>, "$typeName" | "$unknown">;
const prove = (simId: string, o: Partial<Prove> = {}) =>
  h.client.proveOperation({
    messageId: randomUUID(),
    simId,
    kind: "DEP",
    amount: 5000n,
    fee: 50n,
    balanceAfter: 94_950n,
    operatorRef: "CI261122.ABC",
    counterpartyMsisdn: "",
    rawText: "Depot de 5000 FCFA vers 690000001 reussi",
    receivedAt: timestampFromDate(new Date("2026-11-22T10:00:00Z")),
    ...o,
  });
const statusOf = async (id: string) =>
  (await h.query(`select status from dispatch.operations where operation_id = $1`, [id]))[0].status;

describe("ProveOperation: confirmation", () => {
  it("confirms the single candidate and stores the evidence summary on it, in one transaction", async () => {
    const s = sim();
    const id = await operation(s, { status: "awaiting_evidence" });
    const res = await prove(s, { messageId: "m-confirm-1" });
    expect(res.outcome).toBe("confirmed");
    expect(res.operation).toMatchObject({ operationId: id, status: "confirmed", retryAllowed: false });
    expect(res.operation?.evidence).toMatchObject({
      operatorRef: "CI261122.ABC",
      amount: 5000n,
      fee: 50n,
      balanceAfter: 94_950n,
      rawText: "Depot de 5000 FCFA vers 690000001 reussi",
      kind: "DEP",
      isAmbiguous: false,
    });
    const [stored] = await h.query(
      `select evidence_message_id, confirmed_by from dispatch.operations where operation_id = $1`,
      [id],
    );
    expect(stored).toEqual({ evidence_message_id: "m-confirm-1", confirmed_by: "proof" });
    await eventually(() => eventsOf(h, "OperationConfirmed", id)[0], 5000, "operation.confirmed");
  });

  it("answers the operator's repeat of a confirming text as a restatement, never a second confirmation", async () => {
    // Evidence has not recorded the first text's proof (its answer was lost between the two
    // services), so it offers the repeat as a new proof while another operation of the same
    // amount is open.
    const s = sim();
    const first = await operation(s, { status: "awaiting_evidence" });
    expect((await prove(s, { messageId: "m-repeat-1", operatorRef: "CI261126.RPT" })).outcome).toBe("confirmed");
    const second = await operation(s, { status: "awaiting_evidence" });
    const repeat = await prove(s, { messageId: "m-repeat-2", operatorRef: "CI261126.RPT" });
    expect(repeat.outcome).toBe("restated");
    expect(repeat.operation?.operationId).toBe(first);
    expect(await statusOf(second)).toBe("awaiting_evidence");
    // Asked again, the same answer; a text with another reference still proves the open one.
    expect((await prove(s, { messageId: "m-repeat-2", operatorRef: "CI261126.RPT" })).outcome).toBe("restated");
    const other = await prove(s, { messageId: "m-repeat-3", operatorRef: "CI261126.NEW" });
    expect(other.outcome).toBe("confirmed");
    expect(other.operation?.operationId).toBe(second);
  });

  it("confirms a queued operation (the SMS came first): no handset can claim it any more", async () => {
    const s = sim();
    const id = await operation(s);
    expect((await prove(s)).outcome).toBe("confirmed");
    expect(await statusOf(id)).toBe("confirmed");
    const dev = h.fleet.sims.get(s)!.device_id!;
    expect(
      (await h.client.getNextOperation({ caller: { kind: "device", deviceId: dev } as never })).dispatch,
    ).toBeUndefined();
  });

  it.each<[string, { status: string; finishedAgoS: number }, string]>([
    [
      "confirms a no_evidence operation inside the late window",
      { status: "no_evidence", finishedAgoS: 3000 },
      "confirmed",
    ],
    [
      "leaves a no_evidence operation past the late window",
      { status: "no_evidence", finishedAgoS: 3700 },
      "no_candidate",
    ],
    ["never proves a failed operation", { status: "failed", finishedAgoS: 10 }, "no_candidate"],
  ])("%s", async (_rule, state, outcome) => {
    const s = sim();
    await operation(s, state);
    expect((await prove(s)).outcome).toBe(outcome);
  });

  it("lets a balance reply confirm a balance check only", async () => {
    const s = sim();
    const transfer = await operation(s, { status: "awaiting_evidence", amount: 73_400 });
    const check = await operation(s, { type: "balance", amount: 1, status: "running" });
    const res = await prove(s, { kind: "BAL", amount: 73_400n });
    expect([res.outcome, res.operation?.operationId]).toEqual(["confirmed", check]);
    expect(await statusOf(transfer)).toBe("awaiting_evidence");
  });

  it("does not let a message prove an operation created after the handset received it", async () => {
    const s = sim();
    await operation(s);
    const res = await prove(s, { deviceReceivedAt: timestampFromDate(new Date(Date.now() - 60_000)) });
    expect(res.outcome).toBe("no_candidate");
  });

  it("answers ambiguous without confirming anything when two operations fit", async () => {
    const s = sim();
    const a = await operation(s, { status: "awaiting_evidence" });
    const b = await operation(s, { status: "running" });
    const res = await prove(s);
    expect(res.outcome).toBe("ambiguous");
    expect(res.candidateOperationIds).toEqual([a, b].sort());
    expect([await statusOf(a), await statusOf(b)]).toEqual(["awaiting_evidence", "running"]);
  });

  it("answers divergent, confirms nothing and raises an alert when the counterparty contradicts the destination", async () => {
    const s = sim();
    const id = await operation(s, { status: "awaiting_evidence" });
    const res = await prove(s, { counterpartyMsisdn: "690999999", messageId: "m-divergent" });
    expect([res.outcome, res.operation?.operationId]).toEqual(["divergent", id]);
    expect(await statusOf(id)).toBe("awaiting_evidence");
    const alert = await eventually(
      () =>
        h.events.find(
          (e) =>
            e.topic === "alerts" &&
            fromBinary(AlertRaisedSchema, e.value).dedupeKey === "evidence_divergent:m-divergent",
        ),
      5000,
      "the divergence alert",
    );
    expect(fromBinary(AlertRaisedSchema, alert.value)).toMatchObject({
      kind: "evidence_divergent",
      operationId: id,
      simId: s,
    });
  });
});

describe("ProveOperation: its statements", () => {
  it("confirms in four: the message's lock, its earlier answers, the candidates' locks, the change with its proof and outbox rows", async () => {
    const s = sim();
    const id = await operation(s, { status: "awaiting_evidence" });
    const recorded = recordStatements();
    let outcome: string;
    try {
      outcome = (await prove(s, { messageId: "m-statements", operatorRef: "CI261126.STM" })).outcome;
    } finally {
      recorded.stop();
    }
    expect(outcome).toBe("confirmed");
    const proof = recorded.statements.filter(
      (q, i) =>
        recorded.inTransaction[i] && /dispatch\.(operations|proofs)|insert into "dispatch"\.outbox|advisory/.test(q),
    );
    expect(proof).toHaveLength(4);
    expect(proof[0]).toMatch(/pg_advisory_xact_lock/);
    expect(proof[1]).toMatch(/from dispatch\.proofs p where p\.message_id/);
    expect(proof[1]).toMatch(/o\.evidence_operator_ref = \?/);
    expect(proof[2]).toMatch(/for update of o/);
    expect(proof[3]).toMatch(/^\s*with changed as \(update dispatch\.operations/);
    expect(proof[3]).toMatch(/insert into dispatch\.proofs/);
    expect(proof[3]).toMatch(/insert into "dispatch"\.outbox/);
    const [stored] = await h.query(
      `select p.operation_id, p.outcome, o.status, o.updated_at > o.finished_at as moved
         from dispatch.proofs p join dispatch.operations o using (operation_id) where p.message_id = 'm-statements'`,
    );
    expect(stored).toEqual({ operation_id: id, outcome: "confirmed", status: "confirmed", moved: true });
  });
});

describe("ProveOperation: idempotent on message_id", () => {
  it("returns the same answer to a repeat and never confirms twice", async () => {
    const s = sim();
    const id = await operation(s, { status: "awaiting_evidence" });
    const first = await prove(s, { messageId: "m-repeat" });
    const again = await prove(s, { messageId: "m-repeat" });
    expect([again.outcome, again.operation?.operationId]).toEqual([first.outcome, id]);
    await eventually(() => eventsOf(h, "OperationConfirmed", id)[0], 5000, "operation.confirmed");
    const [{ n }] = await h.query(
      `select count(*)::int as n from dispatch.outbox where key = $1 and type like '%OperationConfirmed'`,
      [id],
    );
    expect(n).toBe(1);
  });

  it("keeps a no_candidate answer for a repeat, even once a candidate exists", async () => {
    const s = sim();
    expect((await prove(s, { messageId: "m-orphan" })).outcome).toBe("no_candidate");
    await operation(s, { status: "awaiting_evidence" });
    expect((await prove(s, { messageId: "m-orphan" })).outcome).toBe("no_candidate");
  });

  it("confirms once when 12 copies of one message race", async () => {
    const s = sim();
    const id = await operation(s, { status: "awaiting_evidence" });
    const answers = await Promise.all(Array.from({ length: 12 }, () => prove(s, { messageId: "m-race" })));
    expect(new Set(answers.map((a) => `${a.outcome}:${a.operation?.operationId}`))).toEqual(
      new Set([`confirmed:${id}`]),
    );
    const [{ n }] = await h.query(
      `select count(*)::int as n from dispatch.outbox where key = $1 and type like '%OperationConfirmed'`,
      [id],
    );
    expect(n).toBe(1);
    const [{ proofs }] = await h.query(
      `select count(*)::int as proofs from dispatch.proofs where message_id = 'm-race'`,
    );
    expect(proofs).toBe(1);
  });

  it("lets one of two different messages racing for one operation confirm it; the other finds nothing", async () => {
    for (let round = 0; round < 5; round += 1) {
      const s = sim();
      const id = await operation(s, { status: "awaiting_evidence" });
      // Two different transfers' texts (each its own reference): the same reference would make the
      // later one a restatement of the first once it has confirmed.
      const [x, y] = await Promise.all([
        prove(s, { messageId: `x-${round}`, operatorRef: `CI261122.X${round}` }),
        prove(s, { messageId: `y-${round}`, operatorRef: `CI261122.Y${round}` }),
      ]);
      expect([x.outcome, y.outcome].sort()).toEqual(["confirmed", "no_candidate"]);
      const [stored] = await h.query(`select evidence_message_id from dispatch.operations where operation_id = $1`, [
        id,
      ]);
      expect(stored.evidence_message_id).toBe(x.outcome === "confirmed" ? `x-${round}` : `y-${round}`);
    }
  });

  it("refuses a second confirmation of one operation in the database itself", async () => {
    const s = sim();
    const id = await operation(s, { status: "awaiting_evidence" });
    await prove(s, { messageId: "m-db-1" });
    await expect(
      h.query(
        `insert into dispatch.proofs (message_id, sim_id, outcome, operation_id) values ('m-db-2', $1, 'confirmed', $2)`,
        [s, id],
      ),
    ).rejects.toThrow(/proofs_one_confirmation_per_operation/);
  });
});

describe("AttachEvidence", () => {
  const summary = { operatorRef: "REF-1", amount: 5000n, rawText: "Depot", kind: "DEP", isAmbiguous: true };
  const attach = (caller: unknown, operationId: string, simId: string, messageId: string = randomUUID()) =>
    h.client.attachEvidence({
      caller: caller as never,
      operationId,
      messageId,
      simId,
      evidence: summary,
      senderIsOperator: true,
      counterpartyMsisdn: "690000001",
    });

  it("confirms the operation for the agent named on it, a supervisor or an admin, and refuses other agents", async () => {
    const s = sim();
    const own = await operation(s, { status: "no_evidence", finishedAgoS: 99_999 });
    expect((await attach(session(agent), own, s)).operation).toMatchObject({
      status: "confirmed",
      evidence: { isAmbiguous: true },
    });
    const theirs = await operation(s, { status: "awaiting_evidence" });
    const byStranger = await refusalOf(attach(session(other), theirs, s));
    // Outside the caller's scope: the very answer of an operation that does not exist.
    expect([byStranger.status, byStranger.code, byStranger.context.reason]).toEqual([
      404,
      "not_found",
      "operation_not_found",
    ]);
    const nobody = randomUUID();
    const unknown = await refusalOf(attach(session(other), nobody, s));
    expect(JSON.stringify(byStranger).replaceAll(theirs, "ID")).toBe(JSON.stringify(unknown).replaceAll(nobody, "ID"));
    const bySupervisor = await attach(session(supervisor, "supervisor"), await operation(s, { status: "running" }), s);
    expect(bySupervisor.operation?.status).toBe("confirmed");
  });

  it("answers 404, then 409 for a terminal operation, then 422 for another SIM", async () => {
    const s = sim();
    expect((await refusalOf(attach(session(agent), randomUUID(), s))).status).toBe(404);
    const failed = await operation(s, { status: "failed" });
    const terminal = await refusalOf(attach(session(agent), failed, sim()));
    expect([terminal.status, terminal.code, terminal.context.reason]).toEqual([
      409,
      "conflict",
      "operation_not_attachable",
    ]);
    const open = await operation(s, { status: "awaiting_evidence" });
    const elsewhere = await refusalOf(attach(session(agent), open, sim()));
    expect([elsewhere.status, elsewhere.code, elsewhere.context.reason]).toEqual([
      422,
      "refused",
      "evidence_sim_mismatch",
    ]);
  });

  it("refuses an operation already proven by another message (409) and accepts the same message again (200)", async () => {
    const s = sim();
    const id = await operation(s, { status: "awaiting_evidence" });
    await attach(session(agent), id, s, "m-attach-1");
    expect((await attach(session(agent), id, s, "m-attach-1")).operation?.evidence?.operatorRef).toBe("REF-1");
    const second = await refusalOf(attach(session(agent), id, s, "m-attach-2"));
    expect([second.status, second.code, second.context.reason]).toEqual([409, "conflict", "operation_not_attachable"]);
  });

  it("refuses a message that already proves another operation", async () => {
    const s = sim();
    const a = await operation(s, { status: "awaiting_evidence" });
    const b = await operation(s, { status: "awaiting_evidence" });
    await attach(session(agent), a, s, "m-used");
    const refused = await refusalOf(attach(session(agent), b, s, "m-used"));
    expect([refused.status, refused.code, refused.context.reason]).toEqual([409, "conflict", "evidence_already_used"]);
  });

  it("proves an operation settled on word without a second operation.confirmed", async () => {
    const s = sim();
    const id = await operation(s, { status: "no_evidence", finishedAgoS: 10 });
    await h.client.settleOperation({
      caller: session(agent),
      operationId: id,
      outcome: "arrived",
      note: "Customer called",
    });
    const word = await h.client.listSettledOnWord({ caller: session(agent), window: { all: true } });
    expect(word.operations.map((o) => o.operationId)).toContain(id);
    const res = await attach(session(agent), id, s);
    expect(res.operation?.status).toBe("confirmed");
    const after = await h.client.listSettledOnWord({ caller: session(agent), window: { all: true } });
    expect(after.operations.map((o) => o.operationId)).not.toContain(id);
    await eventually(
      () => (eventsOf(h, "OperationChanged", id).length >= 3 ? true : undefined),
      5000,
      "the attach event",
    );
    expect(eventsOf(h, "OperationConfirmed", id)).toHaveLength(1);
  });
});

describe("AttachEvidence: attach is proof", () => {
  const summary = { operatorRef: "REF-9", amount: 5000n, rawText: "Depot", kind: "DEP", isAmbiguous: false };
  const attach = (
    operationId: string,
    simId: string,
    o: { kind?: string; amount?: bigint; sender?: boolean; msisdn?: string } = {},
  ) =>
    h.client.attachEvidence({
      caller: session(agent),
      operationId,
      messageId: randomUUID(),
      simId,
      evidence: { ...summary, kind: o.kind ?? "DEP", amount: o.amount ?? 5000n },
      senderIsOperator: o.sender ?? true,
      counterpartyMsisdn: o.msisdn ?? "690000001",
    });

  it.each<[string, { kind?: string; amount?: bigint; sender?: boolean; msisdn?: string }, string, string]>([
    ["an unknown sender", { sender: false }, "awaiting_evidence", "evidence_unknown_sender"],
    ["an operator refusal", { kind: "FAIL" }, "awaiting_evidence", "evidence_kind_cannot_prove"],
    ["another amount", { amount: 777n }, "awaiting_evidence", "evidence_amount_mismatch"],
    ["another number", { msisdn: "690000002" }, "awaiting_evidence", "evidence_number_mismatch"],
    ["an operation never dialled", {}, "queued", "operation_never_dialled"],
  ])("refuses %s with 422 and leaves the operation as it was", async (_name, o, status, reason) => {
    const s = sim();
    const id = await operation(s, status === "queued" ? {} : { status });
    const refused = await refusalOf(attach(id, s, o));
    expect([refused.status, refused.code, refused.context.reason]).toEqual([422, "refused", reason]);
    const [row] = await h.query(`select status, evidence_message_id from dispatch.operations where operation_id = $1`, [
      id,
    ]);
    expect(row).toEqual({ status, evidence_message_id: null });
  });
});
