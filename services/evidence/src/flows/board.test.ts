// The board's side of evidence against real PostgreSQL: the unmatched queue, movements,
// dismissal, attach, daily reconciliations, and deletion with the SIM.

import { beforeEach, describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { SimDeletedSchema } from "@transferops/kit/gen/transferops/fleet/v1/events_pb";
import { balanceReply, failure, promotion, transferReceived } from "../domain/sms-templates.ts";
import { fleetHandlers } from "../events/fleet.ts";
import {
  deposit,
  messageRows,
  newRef,
  one,
  useHarness,
  outboxTypes,
  OTHER_SIM,
  session,
  SIM,
  type Harness,
} from "../../../../test/support/evidence-harness.ts";
import { attach, dismiss, movements, unmatchedEvidence } from "./board.ts";
import { rejectionOf } from "../../../../test/support/refusal.ts";

let h: Harness;
useHarness((opened) => (h = opened));

const AGENT = "aaaaaaaa-0000-4000-8000-000000000001";
const OUTSIDER = "aaaaaaaa-0000-4000-8000-000000000002";
const SUPERVISOR = "aaaaaaaa-0000-4000-8000-000000000003";
const OP = "33333333-3333-4333-8333-333333333333";

beforeEach(() => {
  h.fleet.grants.set(AGENT, { simIds: [SIM], role: "agent", isActive: true });
  h.fleet.grants.set(OUTSIDER, { simIds: [OTHER_SIM], role: "agent", isActive: true });
});

const window = (w: Partial<{ days: number; from: string; to: string; all: boolean }> = {}) => ({
  days: 0,
  from: "",
  to: "",
  all: false,
  ...w,
});

async function refusalOf(p: Promise<unknown>): Promise<{ status: string; reason: string }> {
  const e = await rejectionOf(p);
  return { status: e.status, reason: e.reason ?? e.code };
}

const unmatched = (
  agentId: string,
  role = "agent",
  o: Partial<{ unmatched: boolean; limit: number; window: ReturnType<typeof window> }> = {},
) => unmatchedEvidence(h.deps, { caller: session(agentId, role), unmatched: true, limit: 0, window: window(), ...o });

const movement = (amount: number) =>
  transferReceived("operator_b", {
    amount,
    balanceAfter: 10_000,
    ref: newRef(),
    msisdn: "699000111",
    name: "PAUL EKANE",
    at: new Date(),
    language: "fr",
  });

describe("unmatched queue", () => {
  it("lists orphans, ambiguous, divergent, uncorrelated and refusals; never linked messages, movements or notices", async () => {
    h.dispatch.add({ operationId: OP, simId: SIM, montant: 1000 });
    await one(h, deposit(1000)); // confirmed
    const orphan = await one(h, deposit(2000));
    const uncorrelated = await one(h, deposit(3000), { correlate: false });
    const refusal = await one(h, failure("operator_b", { language: "fr" }));
    const bal = await one(h, balanceReply("operator_b", { balance: 5000, language: "fr" }));
    await one(h, movement(4000));
    await one(h, promotion("operator_b", { language: "en" }));
    const listed = await unmatched(SUPERVISOR, "supervisor");
    expect(new Set(listed.map((m) => m.id))).toEqual(
      new Set([orphan.messageId, uncorrelated.messageId, refusal.messageId, bal.messageId]),
    );
  });

  it("refuses unmatched=false with 400", async () => {
    expect(await refusalOf(unmatched(AGENT, "agent", { unmatched: false }))).toEqual({
      status: "bad_request",
      reason: "unmatched_required",
    });
  });

  it("scopes an agent to the SIMs of its grant; supervisors and admins see the fleet", async () => {
    const mine = await one(h, deposit(2000));
    const theirs = await one(h, deposit(2000), { simId: OTHER_SIM });
    expect((await unmatched(AGENT)).map((m) => m.id)).toEqual([mine.messageId]);
    expect((await unmatched(OUTSIDER)).map((m) => m.id)).toEqual([theirs.messageId]);
    expect((await refusalOf(unmatched("aaaaaaaa-0000-4000-8000-00000000dead"))).reason).toBe("agent_inactive");
    for (const role of ["supervisor", "admin"]) expect(await unmatched(SUPERVISOR, role)).toHaveLength(2);
  });

  it("gives an agent with a grant of no SIM an empty list", async () => {
    h.fleet.grants.set(AGENT, { simIds: [], role: "agent", isActive: true });
    await one(h, deposit(2000));
    expect(await unmatched(AGENT)).toEqual([]);
  });

  it("windows on received_at by local day, newest first, and honours limit", async () => {
    const at = (iso: string) => new Date(iso);
    await one(h, deposit(1), { receivedAt: at("2026-01-01T22:59:00Z") }); // 23:59 on 1 Jan, local time
    await one(h, deposit(2), { receivedAt: at("2026-01-01T23:00:00Z") }); // 00:00 on 2 Jan local
    await one(h, deposit(3), { receivedAt: at("2026-01-03T12:00:00Z") });
    const amounts = async (w: ReturnType<typeof window>, limit = 0) =>
      (await unmatched(AGENT, "agent", { window: w, limit })).map((m) => m.amount);
    expect(await amounts(window({ from: "2026-01-02", to: "2026-01-02" }))).toEqual([2]);
    expect(await amounts(window({ from: "2026-01-01", to: "2026-01-02" }))).toEqual([2, 1]);
    expect(await amounts(window({ from: "2026-01-02" }))).toEqual([3, 2]);
    expect(await amounts(window({ to: "2026-01-01" }))).toEqual([1]);
    expect(await amounts(window({ all: true }))).toEqual([3, 2, 1]);
    expect(await amounts(window({ all: true }), 2)).toEqual([3, 2]);
    expect((await refusalOf(amounts(window({ from: "2026-01-03", to: "2026-01-02" })))).reason).toBe("invalid_request");
  });

  it("defaults to the last 30 local days; days and all reach further", async () => {
    const daysAgo = (n: number) => new Date(Date.now() - n * 24 * 3600_000);
    await one(h, deposit(10), { receivedAt: daysAgo(10) });
    await one(h, deposit(40), { receivedAt: daysAgo(40) });
    const amounts = async (w: ReturnType<typeof window>) =>
      (await unmatched(AGENT, "agent", { window: w })).map((m) => m.amount);
    expect(await amounts(window())).toEqual([10]);
    expect(await amounts(window({ days: 42 }))).toEqual([10, 40]);
    expect(await amounts(window({ all: true }))).toEqual([10, 40]);
    expect((await refusalOf(amounts(window({ days: 366 })))).reason).toBe("invalid_request");
  });
});

describe("movements", () => {
  it("lists movements newest first, dismissed ones included, never other kinds", async () => {
    const older = await one(h, movement(100), { receivedAt: new Date(Date.now() - 60_000) });
    const newer = await one(h, movement(200));
    await one(h, deposit(300));
    await dismiss(h.deps, { caller: session(AGENT), evidenceId: older.messageId, reason: "not_ours" });
    const list = await movements(h.deps, { caller: session(AGENT), limit: 0, window: window() });
    expect(list.map((m) => m.id)).toEqual([newer.messageId, older.messageId]);
    expect(list[1].dismissed_at).not.toBeNull();
    expect(await movements(h.deps, { caller: session(OUTSIDER), limit: 0, window: window() })).toEqual([]);
    expect((await refusalOf(movements(h.deps, { caller: session(AGENT), limit: 251, window: window() }))).reason).toBe(
      "invalid_request",
    );
  });
});

describe("dismiss", () => {
  it("takes a message out of the queue, idempotently, keeping the first reason", async () => {
    const orphan = await one(h, deposit(2000));
    await dismiss(h.deps, { caller: session(AGENT), evidenceId: orphan.messageId, reason: "balance_reading" });
    await dismiss(h.deps, { caller: session(AGENT), evidenceId: orphan.messageId, reason: "other" });
    expect(await unmatched(AGENT)).toEqual([]);
    const [row] = await messageRows(h);
    expect(row).toMatchObject({ dismiss_reason: "balance_reading", dismissed_by: AGENT });
    expect((await outboxTypes(h)).filter((t) => t === "MessageDismissed")).toHaveLength(1);
  });

  it("answers 404, 403 and 409 in that order", async () => {
    h.dispatch.add({ operationId: OP, simId: SIM, montant: 1000 });
    const linked = await one(h, deposit(1000));
    const orphan = await one(h, deposit(2000));
    const d = (agentId: string, evidenceId: string, role = "agent") =>
      dismiss(h.deps, { caller: session(agentId, role), evidenceId, reason: "other" });
    expect(await refusalOf(d(AGENT, "44444444-4444-4444-8444-444444444444"))).toEqual({
      status: "not_found",
      reason: "evidence_not_found",
    });
    expect(await refusalOf(d(OUTSIDER, orphan.messageId))).toEqual({ status: "forbidden", reason: "sim_not_in_grant" });
    expect(await refusalOf(d(OUTSIDER, linked.messageId))).toEqual({ status: "forbidden", reason: "sim_not_in_grant" });
    expect(await refusalOf(d(AGENT, linked.messageId))).toEqual({
      status: "conflict",
      reason: "evidence_already_linked",
    });
    expect(await refusalOf(d(SUPERVISOR, linked.messageId, "supervisor"))).toEqual({
      status: "conflict",
      reason: "evidence_already_linked",
    });
    await d(SUPERVISOR, orphan.messageId, "supervisor");
  });

  it("refuses a reason outside the contract's list", async () => {
    const orphan = await one(h, deposit(2000));
    expect(
      (await refusalOf(dismiss(h.deps, { caller: session(AGENT), evidenceId: orphan.messageId, reason: "spam" })))
        .reason,
    ).toBe("invalid_request");
  });
});

describe("attach", () => {
  it("links an orphan to an operation dispatch confirms, and publishes the link", async () => {
    const orphan = await one(h, deposit(2500));
    h.dispatch.add({ operationId: OP, simId: SIM, montant: 2500, status: "no_evidence" });
    const res = await attach(h.deps, { caller: session(AGENT), operationId: OP, evidenceId: orphan.messageId });
    expect(res.operation.status).toBe("confirmed");
    expect(res.evidence).toMatchObject({ operation_id: OP, link: "proof", outcome: "attached", linked_by: AGENT });
    expect(h.dispatch.attachCalls[0]).toMatchObject({ operationId: OP, messageId: orphan.messageId, simId: SIM });
    expect(h.dispatch.attachCalls[0].evidence).toMatchObject({ amount: 2500n, kind: "DEP", isAmbiguous: false });
    // What dispatch's attach rule reads besides the summary: who sent it, the number it names.
    expect(h.dispatch.attachCalls[0]).toMatchObject({ senderIsOperator: true, counterpartyMsisdn: "690000001" });
    // The balance the proof printed goes to the SIM's mirror, as an automatic match's does.
    expect(h.fleet.balanceCalls.map((c) => [c.simId, c.balance, c.source, c.messageId])).toEqual([
      [SIM, 250_000n, "sms", orphan.messageId],
    ]);
    expect(res.evidence).toMatchObject({ balance_state: "done", balance: 250_000 });
    expect(await unmatched(AGENT)).toEqual([]);
    expect((await outboxTypes(h)).at(-1)).toBe("MessageLinked");
    expect(
      await refusalOf(attach(h.deps, { caller: session(AGENT), operationId: OP, evidenceId: orphan.messageId })),
    ).toEqual({
      status: "conflict",
      reason: "evidence_already_linked",
    });
    expect(h.dispatch.confirmations).toHaveLength(1);
  });

  it("tells dispatch an unknown sender's text is not the operator's (dispatch's attach rule refuses it)", async () => {
    const forged = await one(h, deposit(2500), { sender: "+237670000000" });
    h.dispatch.add({ operationId: OP, simId: SIM, montant: 2500, status: "no_evidence" });
    await attach(h.deps, { caller: session(AGENT), operationId: OP, evidenceId: forged.messageId });
    expect(h.dispatch.attachCalls[0]).toMatchObject({ messageId: forged.messageId, senderIsOperator: false });
  });

  it("asks dispatch for the caller's scope first, then answers 404 for an unknown message without attaching", async () => {
    h.dispatch.add({ operationId: OP, simId: SIM, montant: 2500 });
    expect(
      await refusalOf(
        attach(h.deps, { caller: session(AGENT), operationId: OP, evidenceId: "44444444-4444-4444-8444-444444444444" }),
      ),
    ).toEqual({
      status: "not_found",
      reason: "evidence_not_found",
    });
    expect(h.dispatch.scopeChecks.map((c) => c.operationId)).toEqual([OP]);
    expect(h.dispatch.attachCalls).toHaveLength(0);
  });

  it("records nothing when dispatch refuses (another SIM, terminal operation)", async () => {
    const orphan = await one(h, deposit(2500));
    h.dispatch.add({ operationId: OP, simId: OTHER_SIM, montant: 2500 });
    await expect(
      attach(h.deps, { caller: session(AGENT), operationId: OP, evidenceId: orphan.messageId }),
    ).rejects.toThrow(/different SIM/);
    const [row] = await messageRows(h);
    expect(row.operation_id).toBeNull();
  });

  it("refuses a second proving message for one operation with 409, whatever dispatch says", async () => {
    h.dispatch.add({ operationId: OP, simId: SIM, montant: 1000 });
    await one(h, deposit(1000));
    const orphan = await one(h, deposit(1000));
    h.dispatch.operations.get(OP)!.status = "no_evidence"; // a stand-in that would let it through
    expect(
      await refusalOf(attach(h.deps, { caller: session(AGENT), operationId: OP, evidenceId: orphan.messageId })),
    ).toEqual({
      status: "conflict",
      reason: "operation_already_proven",
    });
  });
});

describe("daily reconciliation", () => {
  it("counts each local day's messages per SIM and keeps the last balance", async () => {
    h.dispatch.add({ operationId: OP, simId: SIM, montant: 1000 });
    const day = new Date("2026-02-10T10:00:00Z");
    const later = new Date("2026-02-10T11:00:00Z");
    await one(h, deposit(1000, { balanceAfter: 50_000 }), { receivedAt: day });
    const orphan = await one(h, deposit(2000, { balanceAfter: 48_000 }), { receivedAt: later });
    await one(h, movement(700), { receivedAt: new Date("2026-02-10T09:00:00Z") });
    await one(h, deposit(5), { receivedAt: new Date("2026-02-10T23:30:00Z") }); // next local day
    await dismiss(h.deps, { caller: session(AGENT), evidenceId: orphan.messageId, reason: "not_ours" });
    const rows = (await h.db.em().execute(`select * from evidence.daily_reconciliations order by day`)) as Record<
      string,
      unknown
    >[];
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({
      sim_id: SIM,
      messages: 3,
      confirmed: 1,
      unmatched: 0,
      dismissed: 1,
      movements: 1,
      proven_xaf: "1000",
      movements_in_xaf: "700",
      last_balance: "48000",
    });
    expect(rows[1]).toMatchObject({ messages: 1, unmatched: 1 });
    // The rows are kept by adding each change: they equal a count of the messages themselves.
    const days = (await h.db.em().execute(`select sim_id, day::text as day from evidence.daily_reconciliations`)) as {
      sim_id: string;
      day: string;
    }[];
    for (const d of days) {
      const [stored] = (await h.db
        .em()
        .execute(`select * from evidence.daily_reconciliations where sim_id = ? and day = ?::date`, [
          d.sim_id,
          d.day,
        ])) as Record<string, unknown>[];
      expect(stored).toMatchObject(await recount(d.sim_id, d.day));
    }
  });
});

/** The day's counts from its messages, independently of how the row was kept (local day: UTC+1). */
async function recount(simId: string, day: string): Promise<Record<string, unknown>> {
  const [r] = (await h.db.em().execute(
    `select count(*)::int as messages,
       count(*) filter (where outcome = 'confirmed')::int as confirmed,
       count(*) filter (where outcome = 'restated')::int as restated,
       count(*) filter (where outcome = 'attached')::int as attached,
       count(*) filter (where state = 'done' and operation_id is null and dismissed_at is null
                          and (kind is null or kind in ('DEP', 'BAL', 'FAIL')))::int as unmatched,
       count(*) filter (where is_ambiguous)::int as ambiguous,
       count(*) filter (where outcome = 'divergent')::int as divergent,
       count(*) filter (where dismissed_at is not null)::int as dismissed,
       coalesce(sum(amount) filter (where link = 'proof' and kind is distinct from 'BAL'), 0)::text as proven_xaf,
       coalesce(sum(fee) filter (where link = 'proof'), 0)::text as fees_xaf,
       (array_agg(balance_after order by received_at desc)
          filter (where balance_after is not null and outcome <> 'unknown_sender'))[1]::text as last_balance
     from evidence.messages
     where sim_id = ? and ((received_at at time zone 'UTC') + interval '1 hour')::date = ?::date`,
    [simId, day],
  )) as Record<string, unknown>[];
  return r!;
}

describe("deletion with the SIM", () => {
  it("deletes the SIM's evidences and reconciliations, and nothing of other SIMs", async () => {
    await one(h, deposit(1));
    await one(h, deposit(2), { simId: OTHER_SIM });
    await h.db.tx((em) =>
      fleetHandlers[0].handle(em, create(SimDeletedSchema, { simId: SIM }), {
        eventId: "e",
        type: "SimDeleted",
        occurredAt: new Date(),
        correlationId: "c",
      }),
    );
    const left = await messageRows(h);
    expect(left.map((r) => r.sim_id)).toEqual([OTHER_SIM]);
    const recon = (await h.db.em().execute(`select sim_id from evidence.daily_reconciliations`)) as {
      sim_id: string;
    }[];
    expect(recon.map((r) => r.sim_id)).toEqual([OTHER_SIM]);
    expect((await outboxTypes(h)).at(-1)).toBe("MessagesPurged");
  });
});
