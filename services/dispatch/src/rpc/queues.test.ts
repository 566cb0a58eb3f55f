import { randomUUID } from "node:crypto";
import { fromBinary } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { beforeAll, describe, expect, it } from "vitest";
import { OperationChangedSchema } from "@transferops/kit/gen/transferops/dispatch/v1/events_pb";
import {
  apiKey,
  device,
  eventsOf,
  eventually,
  refusalOf,
  session,
  useDispatchHarness,
  type DispatchHarness,
} from "../../../../test/support/dispatch-harness.ts";

let h: DispatchHarness;
const agent = randomUUID();
const colleague = randomUUID();
const supervisor = randomUUID();
const admin = randomUUID();
let mySim: string;
let sharedSim: string;
let otherSim: string;

useDispatchHarness(
  { EVIDENCE_WINDOW_S: "600", LATE_EVIDENCE_S: "3600", DEVICE_COOLDOWN_S: "0" },
  (started) => (h = started),
);
beforeAll(() => {
  h.fleet.addAgent(agent, { full_name: "Ada Agent" });
  h.fleet.addAgent(colleague, { full_name: "Colin Colleague" });
  h.fleet.addAgent(supervisor, { role: "supervisor", full_name: "Sue Supervisor" });
  h.fleet.addAgent(admin, { role: "admin", full_name: "Root Admin" });
  mySim = randomUUID();
  sharedSim = randomUUID();
  otherSim = randomUUID();
  h.fleet.addSim({ sim_id: mySim, operator: "operator_b", device_id: "dev-mine" });
  h.fleet.addSim({ sim_id: sharedSim, operator: "operator_b", device_id: "dev-shared" });
  h.fleet.addSim({ sim_id: otherSim, operator: "operator_b", device_id: "dev-other" });
  // The agent's grant assigns it mySim and sharedSim; the colleague works on sharedSim and otherSim.
  h.fleet.grant(agent, { allowed_sim_ids: [mySim, sharedSim] });
  h.fleet.grant(colleague, { allowed_sim_ids: [sharedSim, otherSim] });
});

async function operation(
  owner: string,
  simId: string,
  o: {
    status?: string;
    finishedAgoS?: number;
    amount?: number;
    type?: string;
    name?: string;
    msisdn?: string;
    requestId?: string;
  } = {},
): Promise<string> {
  const res = await h.client.createOperation({
    caller: apiKey(),
    agentId: owner,
    requestId: o.requestId ?? randomUUID(),
    operator: "operator_b",
    clientMsisdn: o.msisdn ?? "690000001",
    clientNom: o.name ?? "Jean Dupont",
    montant: BigInt(o.amount ?? 5000),
    typeOp: o.type ?? "deposit",
    simId,
  });
  const id = res.operation!.operationId;
  if (o.status) {
    await h.query(
      `update dispatch.operations set status = $2, started_at = now(), finished_at = now() - make_interval(secs => $3) where operation_id = $1`,
      [id, o.status, o.finishedAgoS ?? 0],
    );
  }
  return id;
}

describe("evidence window: the sweep", () => {
  it("moves an operation awaiting evidence to no_evidence once its window closed, and not before", async () => {
    const id = await operation(agent, mySim);
    await h.client.getNextOperation({ caller: device("dev-mine") });
    const reported = await h.client.reportOutcome({
      caller: device("dev-mine"),
      operationId: id,
      outcome: "ussd_ok",
      executedAt: timestampFromDate(new Date()),
    });
    expect(reported.status).toBe("awaiting_evidence");
    await h.service.sweep();
    expect((await h.client.getOperation({ caller: session(agent), operationId: id })).operation?.status).toBe(
      "awaiting_evidence",
    );
    h.clock.offsetMs += 600_000;
    try {
      const backlog = await h.client.getSweepBacklog({});
      expect(backlog.pastWindowNotSwept).toBeGreaterThanOrEqual(1);
      expect(await h.service.sweep()).toBeGreaterThanOrEqual(1);
      const after = await h.client.getOperation({ caller: session(agent), operationId: id });
      expect(after.operation).toMatchObject({
        status: "no_evidence",
        retryAllowed: true,
        retryRequiresConfirmation: true,
      });
      expect((await h.client.getSweepBacklog({})).pastWindowNotSwept).toBe(0);
      const ev = await eventually(
        () =>
          eventsOf(h, "OperationChanged", id).find(
            (e) => fromBinary(OperationChangedSchema, e.value).trigger === "sweep",
          ),
        5000,
        "the sweep event",
      );
      expect(fromBinary(OperationChangedSchema, ev.value).previousStatus).toBe("awaiting_evidence");
    } finally {
      h.clock.offsetMs -= 600_000;
    }
  });

  it("frees a handset whose running operation was never reported: no_evidence after the running timeout", async () => {
    const id = await operation(agent, mySim);
    const claimed = await h.client.getNextOperation({ caller: device("dev-mine") });
    expect(claimed.dispatch?.operationId).toBe(id);
    await h.service.sweep();
    expect((await h.client.getOperation({ caller: session(agent), operationId: id })).operation?.status).toBe(
      "running",
    );
    h.clock.offsetMs += 901_000;
    try {
      expect(await h.service.sweep()).toBeGreaterThanOrEqual(1);
      const after = (await h.client.getOperation({ caller: session(agent), operationId: id })).operation;
      expect(after).toMatchObject({ status: "no_evidence", failureReason: "handset_never_reported" });
      expect(after?.finishedAt).toBeDefined();
      const ev = await eventually(
        () =>
          eventsOf(h, "OperationChanged", id).find(
            (e) => fromBinary(OperationChangedSchema, e.value).trigger === "running_timeout",
          ),
        5000,
        "the running-timeout event",
      );
      expect(fromBinary(OperationChangedSchema, ev.value).previousStatus).toBe("running");
      // The handset's report arriving after that is recorded, the status kept.
      const late = await h.client.reportOutcome({
        caller: device("dev-mine"),
        operationId: id,
        outcome: "ussd_ok",
        ussdResponse: "Depot de 5000 FCFA effectue",
        executedAt: timestampFromDate(new Date()),
      });
      expect(late.status).toBe("no_evidence");
      const [row] = await h.query(
        `select device_outcome, ussd_response from dispatch.operations where operation_id = $1`,
        [id],
      );
      expect(row).toEqual({ device_outcome: "ussd_ok", ussd_response: "Depot de 5000 FCFA effectue" });
    } finally {
      h.clock.offsetMs -= 901_000;
    }
  });

  it("leaves a swept operation provable by a late message inside the late window", async () => {
    const id = await operation(agent, mySim, { status: "no_evidence", finishedAgoS: 900, amount: 6100 });
    const res = await h.client.proveOperation({
      messageId: randomUUID(),
      simId: mySim,
      kind: "DEP",
      amount: 6100n,
      rawText: "late",
    });
    expect([res.outcome, res.operation?.operationId]).toEqual(["confirmed", id]);
  });
});

describe("arbitration queue (unproven)", () => {
  it("shows an agent its own transfers and those on SIMs its grant assigns, nothing else", async () => {
    // Its own transfer on a SIM its grant no longer assigns it.
    const own = await operation(agent, mySim, { status: "no_evidence", finishedAgoS: 60 });
    await h.query(`update dispatch.operations set sim_id = $2 where operation_id = $1`, [own, otherSim]);
    const onShared = await operation(colleague, sharedSim, { status: "no_evidence", finishedAgoS: 60 });
    const elsewhere = await operation(colleague, otherSim, { status: "no_evidence", finishedAgoS: 60 });
    const mine = (await h.client.listUnproven({ caller: session(agent) })).operations.map((o) => o.operationId);
    expect(mine).toEqual(expect.arrayContaining([own, onShared]));
    expect(mine).not.toContain(elsewhere);
    const sup = (await h.client.listUnproven({ caller: session(supervisor, "supervisor") })).operations.map(
      (o) => o.operationId,
    );
    expect(sup).not.toContain(elsewhere);
    const fleet = (await h.client.listUnproven({ caller: session(admin, "admin") })).operations.map(
      (o) => o.operationId,
    );
    expect(fleet).toEqual(expect.arrayContaining([own, onShared, elsewhere]));
  });

  it("leaves out balance checks, mini statements and operations not in no_evidence", async () => {
    const check = await operation(agent, mySim, { type: "balance", amount: 1, status: "no_evidence", finishedAgoS: 5 });
    const waiting = await operation(agent, mySim, { status: "awaiting_evidence", finishedAgoS: 5, amount: 5200 });
    const ids = (await h.client.listUnproven({ caller: session(agent) })).operations.map((o) => o.operationId);
    expect(ids).not.toContain(check);
    expect(ids).not.toContain(waiting);
  });

  it("says self_resolving inside the late window and counts the ambiguous messages naming the transfer", async () => {
    const recent = await operation(agent, mySim, { status: "no_evidence", finishedAgoS: 600, amount: 7777 });
    const twin = await operation(agent, mySim, { status: "no_evidence", finishedAgoS: 700, amount: 7777 });
    const old = await operation(agent, mySim, { status: "no_evidence", finishedAgoS: 4000, amount: 8888 });
    for (const m of ["amb-1", "amb-2"]) {
      const r = await h.client.proveOperation({ messageId: m, simId: mySim, kind: "DEP", amount: 7777n, rawText: "x" });
      expect(r.outcome).toBe("ambiguous");
    }
    const rows = (await h.client.listUnproven({ caller: session(agent) })).operations;
    const byId = new Map(rows.map((r) => [r.operationId, r]));
    expect(byId.get(recent)).toMatchObject({
      selfResolving: true,
      evidenceCount: 2,
      montant: 7777n,
      opType: "deposit",
      requestId: expect.any(String),
    });
    expect(byId.get(twin)?.evidenceCount).toBe(2);
    expect(byId.get(old)).toMatchObject({ selfResolving: false, evidenceCount: 0 });
  });

  it("lists the contradicted first, then newest finished first, a tie by id, and stops at the limit", async () => {
    const older = await operation(admin, otherSim, { status: "no_evidence", finishedAgoS: 30 });
    const tieA = await operation(admin, otherSim, { status: "no_evidence", finishedAgoS: 20 });
    const tieB = await operation(admin, otherSim, { status: "no_evidence", finishedAgoS: 20 });
    await h.query(
      `update dispatch.operations set finished_at = (select finished_at from dispatch.operations
      where operation_id = $1) where operation_id = $2`,
      [tieA, tieB],
    );
    const contradictedOld = await operation(admin, otherSim, { status: "failed", finishedAgoS: 3000 });
    const contradictedNew = await operation(admin, otherSim, { status: "rejected", finishedAgoS: 2000 });
    // Failed before it dialled: a person's word on a transfer never sent, not the queue's.
    const neverDialled = await operation(admin, otherSim, { status: "failed", finishedAgoS: 10 });
    await h.query(
      `update dispatch.operations set contradicting_message_id = gen_random_uuid()::text
      where operation_id = any($1)`,
      [[contradictedOld, contradictedNew, neverDialled]],
    );
    await h.query(`update dispatch.operations set started_at = null where operation_id = $1`, [neverDialled]);
    const ids = (await h.client.listUnproven({ caller: session(admin, "admin"), limit: 500 })).operations.map(
      (o) => o.operationId,
    );
    const ties = [tieA, tieB].sort();
    const mine = ids.filter((id) => [older, tieA, tieB, contradictedOld, contradictedNew, neverDialled].includes(id));
    expect(mine).toEqual([contradictedNew, contradictedOld, ...ties, older]);
    const two = (await h.client.listUnproven({ caller: session(admin, "admin"), limit: 2 })).operations;
    expect(two.map((o) => o.operationId)).toEqual(ids.slice(0, 2));
  });

  it("is windowed on finished_at: days, from/to, all; a reversed range is 422", async () => {
    const ancient = await operation(agent, mySim, { status: "no_evidence", finishedAgoS: 40 * 86400, amount: 9100 });
    const ids = async (window: object) =>
      (await h.client.listUnproven({ caller: session(agent), window: window as never })).operations.map(
        (o) => o.operationId,
      );
    expect(await ids({})).not.toContain(ancient);
    expect(await ids({ days: 45 })).toContain(ancient);
    expect(await ids({ all: true })).toContain(ancient);
    const day = new Date(Date.now() - 40 * 86400_000 + 3600_000).toISOString().slice(0, 10);
    expect(await ids({ from: "2020-01-01", to: day })).toContain(ancient);
    const reversed = await refusalOf(
      h.client.listUnproven({ caller: session(agent), window: { from: "2026-11-05", to: "2026-11-01" } }),
    );
    expect([reversed.status, reversed.code]).toEqual([422, "invalid_request"]);
  });
});

describe("board settlement", () => {
  it("confirms with `arrived`, recording the note, the person and the time; the transfer joins the settled-on-word queue", async () => {
    const id = await operation(colleague, sharedSim, { status: "no_evidence", finishedAgoS: 100 });
    const res = await h.client.settleOperation({
      caller: session(agent, "agent", "Ada Agent"),
      operationId: id,
      outcome: "arrived",
      note: "Recipient confirmed by phone",
    });
    expect([res.operation?.status, res.operation?.evidence]).toEqual(["confirmed", undefined]);
    const word = (await h.client.listSettledOnWord({ caller: session(agent) })).operations.find(
      (o) => o.operationId === id,
    );
    expect(word).toMatchObject({
      arbitratedByName: "Ada Agent",
      arbitrationNote: "Recipient confirmed by phone",
      simId: sharedSim,
      montant: 5000n,
    });
    expect(word?.arbitratedAt).toBeDefined();
    await eventually(() => eventsOf(h, "OperationConfirmed", id)[0], 5000, "operation.confirmed");
  });

  it("fails with `did_not_arrive`", async () => {
    const id = await operation(agent, mySim, { status: "no_evidence", finishedAgoS: 100 });
    const res = await h.client.settleOperation({
      caller: session(agent),
      operationId: id,
      outcome: "did_not_arrive",
      note: "Nothing came",
    });
    expect(res.operation).toMatchObject({ status: "failed", failureReason: "did_not_arrive", retryAllowed: true });
  });

  it("answers 403 outside the scope, 409 when not in no_evidence, 422 for an empty note, 404 for an unknown id", async () => {
    const elsewhere = await operation(colleague, otherSim, { status: "no_evidence", finishedAgoS: 100 });
    const scope = await refusalOf(
      h.client.settleOperation({ caller: session(agent), operationId: elsewhere, outcome: "arrived", note: "x" }),
    );
    expect([scope.status, scope.code, scope.context.reason]).toEqual([403, "not_allowed", "not_in_scope"]);
    const waiting = await operation(agent, mySim, { status: "awaiting_evidence", finishedAgoS: 5, amount: 5300 });
    const status = await refusalOf(
      h.client.settleOperation({ caller: session(agent), operationId: waiting, outcome: "arrived", note: "x" }),
    );
    expect([status.status, status.code, status.context.reason]).toEqual([409, "conflict", "operation_not_settleable"]);
    const note = await refusalOf(
      h.client.settleOperation({ caller: session(agent), operationId: elsewhere, outcome: "arrived", note: "  " }),
    );
    expect([note.status, note.code]).toEqual([422, "invalid_request"]);
    expect(
      (
        await refusalOf(
          h.client.settleOperation({
            caller: session(agent),
            operationId: randomUUID(),
            outcome: "arrived",
            note: "x",
          }),
        )
      ).status,
    ).toBe(404);
  });
});

describe("admin arbitration", () => {
  it("confirms or fails a no_evidence operation with a note", async () => {
    const a = await operation(colleague, otherSim, { status: "no_evidence", finishedAgoS: 100 });
    const b = await operation(colleague, otherSim, { status: "no_evidence", finishedAgoS: 100, amount: 5400 });
    const confirmed = await h.client.arbitrateOperation({
      caller: session(admin, "admin", "Root Admin"),
      operationId: a,
      decision: "confirmed",
      note: "Statement shows it",
    });
    const failed = await h.client.arbitrateOperation({
      caller: session(admin, "admin", "Root Admin"),
      operationId: b,
      decision: "failed",
      note: "Reversed",
    });
    expect([confirmed.operation?.status, failed.operation?.status, failed.operation?.failureReason]).toEqual([
      "confirmed",
      "failed",
      "arbitrated_failed",
    ]);
    const word = (await h.client.listSettledOnWord({ caller: session(admin, "admin") })).operations.find(
      (o) => o.operationId === a,
    );
    expect(word).toMatchObject({ arbitratedByName: "Root Admin", arbitrationNote: "Statement shows it" });
  });

  it("refuses non-admins (403), an operation not in no_evidence (422), an unknown id (404)", async () => {
    const id = await operation(agent, mySim, { status: "no_evidence", finishedAgoS: 100, amount: 5500 });
    for (const caller of [session(agent), session(supervisor, "supervisor"), apiKey()]) {
      const r = await refusalOf(
        h.client.arbitrateOperation({ caller, operationId: id, decision: "confirmed", note: "x" }),
      );
      expect([r.status, r.code, r.context.reason]).toEqual([403, "not_allowed", "caller_not_allowed"]);
    }
    const queued = await operation(agent, mySim, { amount: 5600 });
    const wrong = await refusalOf(
      h.client.arbitrateOperation({
        caller: session(admin, "admin"),
        operationId: queued,
        decision: "confirmed",
        note: "x",
      }),
    );
    expect([wrong.status, wrong.code, wrong.context.reason]).toEqual([422, "refused", "operation_not_arbitrable"]);
    expect(
      (
        await refusalOf(
          h.client.arbitrateOperation({
            caller: session(admin, "admin"),
            operationId: randomUUID(),
            decision: "failed",
            note: "x",
          }),
        )
      ).status,
    ).toBe(404);
  });
});

describe("list and get operations", () => {
  it("gives a non-admin only its own operations and an admin the fleet; agent_id narrows, never widens", async () => {
    const mine = await operation(agent, mySim, { amount: 5700 });
    const theirs = await operation(colleague, otherSim, { amount: 5700 });
    const own = (await h.client.listOperations({ caller: session(agent), limit: 250 })).operations;
    expect(own.every((o) => o.agentId === agent)).toBe(true);
    expect(own.map((o) => o.operationId)).toContain(mine);
    const fleet = (await h.client.listOperations({ caller: session(admin, "admin"), limit: 250 })).operations.map(
      (o) => o.operationId,
    );
    expect(fleet).toEqual(expect.arrayContaining([mine, theirs]));
    const narrowed = (
      await h.client.listOperations({ caller: session(admin, "admin"), agentId: colleague, limit: 250 })
    ).operations;
    expect(narrowed.every((o) => o.agentId === colleague)).toBe(true);
    const refused = await refusalOf(h.client.listOperations({ caller: session(agent), agentId: colleague }));
    expect([refused.status, refused.code, refused.context.reason]).toEqual([403, "not_allowed", "not_in_scope"]);
    expect(
      (await h.client.listOperations({ caller: session(agent), agentId: agent })).operations.length,
    ).toBeGreaterThan(0);
  });

  it("filters by status, SIM, local day and search (name, request_id, operation_id, digits of the number), newest first, limited", async () => {
    const requestId = `req-${randomUUID()}`;
    const named = await operation(agent, mySim, {
      name: "Béatrice Zangue",
      msisdn: "699123456",
      requestId,
      amount: 5800,
    });
    await h.query(`update dispatch.operations set created_at = '2026-03-10T23:30:00Z' where operation_id = $1`, [
      named,
    ]);
    const list = async (q: object) =>
      (await h.client.listOperations({ caller: session(agent), limit: 250, ...q })).operations.map(
        (o) => o.operationId,
      );
    expect(await list({ search: "zangue" })).toEqual([named]);
    expect(await list({ search: requestId.toUpperCase() })).toEqual([named]);
    expect(await list({ search: named.slice(0, 13) })).toEqual([named]);
    expect(await list({ search: "699 12-34" })).toContain(named);
    // The number's digits are searched on their own: digits of the request_id are not its number,
    // a name's letters never reach the number, and no search reads across two fields.
    const digitsOfId = `req-${Date.now()}777888`;
    const other = await operation(agent, mySim, { name: "Yves Tchami", msisdn: "699000111", requestId: digitsOfId });
    expect(await list({ search: "777-888" })).not.toContain(other);
    expect(await list({ search: "777888" })).toContain(other);
    expect(await list({ search: "tchami" })).toEqual([other]);
    expect(await list({ search: "tchami req" })).toEqual([]);
    expect(await list({ search: "699 000 111" })).toContain(other);
    expect(await list({ search: "\u0001" })).toEqual([]);
    // 23:30 UTC on the 10th is 00:30 local on the 11th.
    expect(await list({ date: "2026-03-11" })).toEqual([named]);
    expect(await list({ date: "2026-03-10" })).toEqual([]);
    expect(await list({ dateFrom: "2026-03-11", dateTo: "2026-03-11" })).toEqual([named]);
    expect(await list({ status: "queued", simId: mySim })).toContain(named);
    expect(await list({ status: "confirmed", search: "zangue" })).toEqual([]);
    const newest = (await h.client.listOperations({ caller: session(agent), limit: 2 })).operations;
    expect(newest).toHaveLength(2);
    expect(Number(newest[0].createdAt!.seconds)).toBeGreaterThanOrEqual(Number(newest[1].createdAt!.seconds));
  });

  it.each([
    [{ status: "done" }, "status"],
    [{ date: "2026-13-01" }, "date"],
    [{ dateFrom: "2026-03-12", dateTo: "2026-03-11" }, "date_from"],
  ])("answers 422 for %j", async (q, field) => {
    const r = await refusalOf(h.client.listOperations({ caller: session(agent), ...q }));
    expect([r.status, r.code, (r.detail as { field: string }[])[0].field]).toEqual([422, "invalid_request", field]);
  });

  it("reads an own operation, refuses another agent's (403) and an unknown id (404)", async () => {
    const theirs = await operation(colleague, otherSim, { amount: 5900 });
    expect((await refusalOf(h.client.getOperation({ caller: session(agent), operationId: theirs }))).status).toBe(403);
    expect(
      (await h.client.getOperation({ caller: session(admin, "admin"), operationId: theirs })).operation?.operationId,
    ).toBe(theirs);
    expect((await refusalOf(h.client.getOperation({ caller: session(agent), operationId: randomUUID() }))).status).toBe(
      404,
    );
  });
});
