import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import {
  apiKey,
  device,
  refusalOf,
  session,
  useDispatchHarness,
  type DispatchHarness,
} from "../../../../test/support/dispatch-harness.ts";

let h: DispatchHarness;
const agent = randomUUID();
const colleague = randomUUID();
const admin = randomUUID();
let simB: string;
let simA: string;

useDispatchHarness({}, (started) => (h = started));
beforeAll(async () => {
  h.fleet.addAgent(agent, { full_name: "Ada Agent" });
  h.fleet.addAgent(colleague);
  h.fleet.addAgent(admin, { role: "admin" });
  simB = randomUUID();
  simA = randomUUID();
  // Every matching operation created here stays awaiting a manual dial, its amount held on the SIM.
  h.fleet.addSim({ sim_id: simB, operator: "operator_b", device_id: "dev-m", balance_mirror: 1_000_000 });
  h.fleet.addSim({ sim_id: simA, operator: "operator_a", device_id: "dev-m", subscription_slot: 1 });
  h.fleet.grant(agent, { allowed_sim_ids: [simB, simA], max_amount: 40_000 });
  h.fleet.grant(colleague, { allowed_sim_ids: [simB] });
});

const create = (o: { caller?: unknown; msisdn?: string; amount?: number; simId?: string; contactId?: string } = {}) =>
  h.client.createMatchingOperation({
    caller: (o.caller ?? session(agent)) as never,
    beneficiaryMsisdn: o.msisdn ?? "690000001",
    montant: BigInt(o.amount ?? 5000),
    simId: o.simId,
    contactId: o.contactId,
  });

describe("create matching operation", () => {
  it("records a deposit awaiting manual dial, operator from the prefix, no recipient name", async () => {
    const res = await create({ contactId: "c-1" });
    expect(res.operation).toMatchObject({
      status: "awaiting_manual_dial",
      origin: "matching",
      opType: "deposit",
      operator: "operator_b",
      simId: simB,
      msisdnDest: "690000001",
      contactId: "c-1",
      agentId: agent,
      retryAllowed: false,
    });
    expect(res.operation?.destName).toBeUndefined();
    expect(res.operation?.requestId).toBe(`matching-${res.operation?.operationId}`);
    const a = await create({ msisdn: "670000001" });
    expect([a.operation?.operator, a.operation?.simId]).toEqual(["operator_a", simA]);
  });

  it("is never claimable by a handset", async () => {
    await create();
    expect((await h.client.getNextOperation({ caller: device("dev-m") })).dispatch).toBeUndefined();
  });

  it.each<[string, () => ReturnType<typeof create>, number, string]>([
    ["refuses the API key (board only)", () => create({ caller: apiKey() }), 403, "caller_not_allowed"],
    ["refuses an undetermined prefix", () => create({ msisdn: "662000000" }), 422, "operator_undetermined"],
    ["refuses an amount above the grant", () => create({ amount: 40_001 }), 403, "over_max_amount"],
    [
      "refuses a SIM the agent does not hold",
      () => create({ caller: session(colleague), msisdn: "670000001" }),
      403,
      "not_in_grant_sim",
    ],
    ["refuses a named SIM of the other operator", () => create({ simId: simA }), 422, "sim_operator_mismatch"],
    [
      "applies a deposit's balance rules",
      () => create({ amount: 2_000_000, simId: simB, caller: session(admin, "admin") }),
      422,
      "insufficient_balance",
    ],
  ])("%s", async (_rule, call, status, reason) => {
    const r = await refusalOf(call());
    const code = { 403: "not_allowed", 422: "refused" }[status as 403 | 422];
    expect([r.status, r.code, r.context.reason]).toEqual([status, code, reason]);
  });

  it("ignores the circuit breaker: a person dials", async () => {
    h.fleet.breaker = true;
    try {
      expect((await create()).operation?.status).toBe("awaiting_manual_dial");
    } finally {
      h.fleet.breaker = false;
    }
  });
});

describe("list, edit and cancel matching operations", () => {
  it("lists only matching operations, own for an agent and all for an admin", async () => {
    const mine = (await create()).operation!.operationId;
    const theirs = (await create({ caller: session(colleague) })).operation!.operationId;
    await h.client.createOperation({
      caller: session(agent),
      requestId: randomUUID(),
      operator: "operator_b",
      clientMsisdn: "690000001",
      clientNom: "X",
      montant: 1000n,
    });
    const own = (await h.client.listMatchingOperations({ caller: session(agent), limit: 250 })).operations;
    expect(own.every((o) => o.origin === "matching" && o.agentId === agent)).toBe(true);
    expect(own.map((o) => o.operationId)).toContain(mine);
    const all = (await h.client.listMatchingOperations({ caller: session(admin, "admin"), limit: 250 })).operations.map(
      (o) => o.operationId,
    );
    expect(all).toEqual(expect.arrayContaining([mine, theirs]));
    expect((await h.client.listMatchingOperations({ caller: session(agent), limit: 1 })).operations).toHaveLength(1);
  });

  it("rewrites what correlation looks for: a proof then finds the new amount and number", async () => {
    const id = (await create({ amount: 5000, contactId: "c-old" })).operation!.operationId;
    const edited = await h.client.updateMatchingOperation({
      caller: session(agent),
      operationId: id,
      montant: 6543n,
      beneficiaryMsisdn: "690777777",
      clearContactId: true,
    });
    expect(edited.operation).toMatchObject({ montant: 6543n, msisdnDest: "690777777", status: "awaiting_manual_dial" });
    expect(edited.operation?.contactId).toBeUndefined();
    const proved = await h.client.proveOperation({
      messageId: randomUUID(),
      simId: simB,
      kind: "DEP",
      amount: 6543n,
      counterpartyMsisdn: "690777777",
      rawText: "Depot",
    });
    expect([proved.outcome, proved.operation?.operationId]).toEqual(["confirmed", id]);
    const late = await refusalOf(
      h.client.updateMatchingOperation({ caller: session(agent), operationId: id, montant: 100n }),
    );
    expect([late.status, late.code, late.context.reason]).toEqual([409, "conflict", "operation_not_editable"]);
  });

  it("holds an edit to the SIM's free balance as a create is: a raise past it is refused, and of two concurrent raises at most what fits", async () => {
    const small = randomUUID();
    h.fleet.addSim({ sim_id: small, operator: "operator_b", device_id: "dev-m", balance_mirror: 10_000 });
    const edit = (operationId: string, montant: number) =>
      h.client.updateMatchingOperation({ caller: session(admin, "admin"), operationId, montant: BigInt(montant) }).then(
        () => "edited",
        async (err: unknown) => (await refusalOf(Promise.reject(err))).context.reason,
      );
    const first = (await create({ caller: session(admin, "admin"), simId: small, amount: 1000 })).operation!;
    const second = (await create({ caller: session(admin, "admin"), simId: small, amount: 1000 })).operation!;
    // 1,000 + 9,500 is past 10,000: refused, the row keeps its 1,000.
    expect(await edit(first.operationId, 9500)).toBe("insufficient_balance");
    // Two raises to 6,000 at once: 12,000 together, so exactly one passes, every time.
    const raised = await Promise.all([edit(first.operationId, 6000), edit(second.operationId, 6000)]);
    expect(raised.sort()).toEqual(["edited", "insufficient_balance"]);
    const rows = await h.query(`select montant::int as montant from dispatch.operations where sim_id = $1`, [small]);
    expect(rows.map((r: { montant: number }) => r.montant).sort((a: number, b: number) => a - b)).toEqual([1000, 6000]);
  });

  it("refuses a number of another operator (422), another agent's operation (403), an unknown or non-matching id (404)", async () => {
    const id = (await create()).operation!.operationId;
    const other = await refusalOf(
      h.client.updateMatchingOperation({ caller: session(agent), operationId: id, beneficiaryMsisdn: "670000001" }),
    );
    expect([other.status, other.code, other.context.reason]).toEqual([422, "refused", "operator_mismatch"]);
    const stranger = await refusalOf(
      h.client.updateMatchingOperation({ caller: session(colleague), operationId: id, montant: 10n }),
    );
    expect(stranger.status).toBe(403);
    expect(
      (await refusalOf(h.client.updateMatchingOperation({ caller: session(agent), operationId: randomUUID() }))).status,
    ).toBe(404);
    const normal = await h.client.createOperation({
      caller: session(agent),
      requestId: randomUUID(),
      operator: "operator_b",
      clientMsisdn: "690000001",
      clientNom: "X",
      montant: 1000n,
    });
    expect(
      (
        await refusalOf(
          h.client.cancelMatchingOperation({ caller: session(agent), operationId: normal.operation!.operationId }),
        )
      ).status,
    ).toBe(404);
  });

  it("cancels while unmatched: rejected with the canceller's name; a second cancel is 409", async () => {
    const id = (await create()).operation!.operationId;
    const res = await h.client.cancelMatchingOperation({
      caller: session(agent, "agent", "Ada Agent"),
      operationId: id,
    });
    expect(res.operation).toMatchObject({ status: "rejected", rejectReason: "Cancelled by Ada Agent." });
    const again = await refusalOf(h.client.cancelMatchingOperation({ caller: session(agent), operationId: id }));
    expect([again.status, again.code, again.context]).toEqual([
      409,
      "operation_not_cancellable",
      { reason: "operation_not_cancellable", operation_id: id, operation_status: "rejected" },
    ]);
    const noProof = await h.client.proveOperation({
      messageId: randomUUID(),
      simId: simB,
      kind: "DEP",
      amount: 5000n,
      rawText: "x",
    });
    expect(noProof.operation?.operationId).not.toBe(id);
  });

  it("refuses the ordinary cancel on a matching operation (409)", async () => {
    const id = (await create()).operation!.operationId;
    const r = await refusalOf(h.client.cancelOperation({ caller: session(agent), operationId: id }));
    expect([r.status, r.code]).toEqual([409, "operation_not_cancellable"]);
  });
});
