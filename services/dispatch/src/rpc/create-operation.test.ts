import { randomUUID } from "node:crypto";
import { beforeEach, describe, expect, it } from "vitest";
import pg from "pg";
import { type MessageInitShape, fromBinary } from "@bufbuild/protobuf";
import type { CreateOperationRequestSchema } from "@transferops/kit/gen/transferops/dispatch/v1/dispatch_service_pb";
import { OperationChangedSchema } from "@transferops/kit/gen/transferops/dispatch/v1/events_pb";
import {
  apiKey,
  eventsOf,
  eventually,
  refusalOf,
  session,
  useDispatchHarness,
  type DispatchHarness,
} from "../../../../test/support/dispatch-harness.ts";
import { UNKNOWN_ID } from "../../../../test/support/constants.ts";
import { recordStatements } from "../../../../test/support/statements.ts";

let h: DispatchHarness;
useDispatchHarness({}, (started) => (h = started));

const HOUR = 3600_000;
let agent: string;
let b1: string;
let b2: string;
let a1: string;

/** A fresh fleet per test: one agent granted b1 and a1, two operator_b SIMs and one operator_a SIM. */
beforeEach(() => {
  h.fleet.sims.clear();
  h.fleet.agents.clear();
  h.fleet.grants.clear();
  h.fleet.breaker = false;
  agent = h.fleet.addAgent(randomUUID(), { full_name: "Ada Agent" });
  b1 = `b1-${randomUUID()}`;
  b2 = `b2-${randomUUID()}`;
  a1 = `a1-${randomUUID()}`;
  h.fleet.addSim({ sim_id: b1, operator: "operator_b", device_id: "dev-1", balance_mirror: 100_000 });
  h.fleet.addSim({ sim_id: b2, operator: "operator_b", device_id: "dev-2", balance_mirror: 100_000 });
  h.fleet.addSim({ sim_id: a1, operator: "operator_a", device_id: "dev-1", balance_mirror: 100_000 });
  h.fleet.grant(agent, {
    allowed_sim_ids: [b1, a1],
    allowed_op_types: ["deposit", "balance", "withdrawal"],
    max_amount: 50_000,
  });
});

type Req = Omit<MessageInitShape<typeof CreateOperationRequestSchema>, "$typeName" | "$unknown">;
const req = (o: Partial<Req> = {}): Req => ({
  caller: session(agent),
  requestId: randomUUID(),
  operator: "operator_b",
  clientMsisdn: "690000001",
  clientNom: "Jean Dupont",
  montant: 5000n,
  ...o,
});

describe("create operation: the gates in their documented precedence (docs/decisions/dispatch.md)", () => {
  type Row = [string, () => void, () => Partial<Req>, number, string, string | RegExp];
  it.each<Row>([
    [
      "1. circuit breaker first, even on a request breaking every later rule (423, detail circuit_breaker)",
      () => void (h.fleet.breaker = true),
      () => ({ montant: 0n, clientMsisdn: "662000000", origin: "matching", caller: apiKey(), agentId: randomUUID() }),
      423,
      "circuit_breaker",
      "circuit_breaker",
    ],
    [
      "2. amount above 0",
      () => {},
      () => ({ montant: 0n, clientMsisdn: "662000000" }),
      422,
      "invalid_request",
      /montant/,
    ],
    [
      "3. origin matching refused on this route",
      () => {},
      () => ({ caller: apiKey(), agentId: agent, origin: "matching", clientMsisdn: "662000000" }),
      422,
      "origin_matching_refused",
      "origin matching is set only by creating a matching operation",
    ],
    [
      "3. an unknown origin",
      () => {},
      () => ({ caller: apiKey(), agentId: agent, origin: "manual" }),
      422,
      "invalid_request",
      /origin/,
    ],
    [
      "4. merchant code for an operator_b withdrawal",
      () => {},
      () => ({ typeOp: "withdrawal", clientMsisdn: "662000000" }),
      422,
      "merchant_code_required",
      "merchant_code is required for withdrawal on operator_b",
    ],
    [
      "5. a prefix of no operator (66x)",
      () => {},
      () => ({ clientMsisdn: "662000000" }),
      422,
      "operator_undetermined",
      "Cannot determine the operator for 662000000",
    ],
    [
      "5. a prefix of the other operator",
      () => {},
      () => ({ clientMsisdn: "670000001" }),
      422,
      "operator_mismatch",
      "Operator mismatch: 670000001 is operator_a, but the operation declares operator_b",
    ],
    [
      "6. the API key naming an agent that does not exist",
      () => {},
      () => ({ caller: apiKey(), agentId: UNKNOWN_ID }),
      422,
      "agent_unknown",
      `Agent ${UNKNOWN_ID} does not exist`,
    ],
    [
      "6. the API key naming an inactive agent",
      () => void (h.fleet.agents.get(agent)!.is_active = false),
      () => ({ caller: apiKey(), agentId: agent }),
      403,
      "agent_inactive",
      /is inactive/,
    ],
    [
      "7. a replay of an operation that does not exist",
      () => {},
      () => ({ parentOperationId: "00000000-0000-4000-8000-000000000001" }),
      404,
      "parent_not_found",
      "Parent operation 00000000-0000-4000-8000-000000000001 does not exist",
    ],
    [
      "8. no access grant",
      () => void h.fleet.grants.clear(),
      () => ({}),
      403,
      "no_grant",
      "Access profile missing: an agent without an access grant can run no operation",
    ],
    [
      "8. a type the grant does not allow",
      () => {},
      () => ({ typeOp: "float_deposit", merchantCode: "M1" }),
      403,
      "not_in_grant_type",
      "Access profile does not allow float_deposit operations",
    ],
    [
      "8. above the grant's max_amount",
      () => {},
      () => ({ montant: 50_001n }),
      403,
      "over_max_amount",
      "Access profile limits an operation to 50000 FCFA; requested 50001",
    ],
    [
      "8. a named SIM outside the grant",
      () => {},
      () => ({ simId: b2 }),
      403,
      "not_in_grant_sim",
      /does not allow SIM b2-/,
    ],
    [
      "8. no granted SIM of the operator",
      () => h.fleet.grant(agent, { allowed_sim_ids: [a1] }),
      () => ({}),
      403,
      "not_in_grant_sim",
      "Access profile grants no operator_b SIM",
    ],
    [
      "9. a named SIM that is frozen",
      () => void (h.fleet.sims.get(b1)!.status = "frozen"),
      () => ({ simId: b1 }),
      422,
      "sim_frozen",
      /^SIM b1-.* is frozen$/,
    ],
    [
      "9. a named SIM in no handset",
      () => Object.assign(h.fleet.sims.get(b1)!, { device_id: null, device_status: null }),
      () => ({ simId: b1 }),
      422,
      "sim_not_assigned",
      /^SIM b1-.* is not assigned to a device$/,
    ],
    [
      "9. a named SIM whose handset is frozen (422: on create 423 is the breaker alone)",
      () => void (h.fleet.sims.get(b1)!.device_status = "frozen"),
      () => ({ simId: b1 }),
      422,
      "device_frozen",
      /holding SIM b1-.* is frozen/,
    ],
    [
      "9. a named SIM of the other operator",
      () => {},
      () => ({ simId: a1 }),
      422,
      "sim_operator_mismatch",
      /belongs to operator_a, but the operation declares operator_b/,
    ],
    [
      "10. no active SIM of the operator",
      () => void (h.fleet.sims.get(b1)!.status = "frozen"),
      () => ({}),
      422,
      "no_active_sim",
      "No active operator_b SIM available",
    ],
    [
      "10. active SIMs exist but none in a handset",
      () => Object.assign(h.fleet.sims.get(b1)!, { device_id: null, device_status: null }),
      () => ({}),
      422,
      "no_assigned_sim",
      "No active operator_b SIM is assigned to a device",
    ],
    [
      "11. no SIM of the operator measured",
      () => Object.assign(h.fleet.sims.get(b1)!, { balance_mirror: null, balance_updated_at: null }),
      () => ({}),
      422,
      "no_measured_balance",
      "No operator_b SIM has a measured balance",
    ],
    [
      "11. a named SIM never measured",
      () => Object.assign(h.fleet.sims.get(b1)!, { balance_mirror: null, balance_updated_at: null }),
      () => ({ simId: b1 }),
      422,
      "sim_unmeasured",
      /^SIM b1-.* has no measured balance$/,
    ],
    [
      "12. a reading older than 24 hours",
      () => void (h.fleet.sims.get(b1)!.balance_updated_at = new Date(Date.now() - 25 * HOUR)),
      () => ({}),
      422,
      "stale_balance",
      /^SIM b1-.* balance was last measured at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+01:00$/,
    ],
    [
      "12. a balance that cannot cover the amount",
      () => void (h.fleet.sims.get(b1)!.balance_mirror = 4999),
      () => ({}),
      422,
      "insufficient_balance",
      /^Insufficient balance on SIM b1-.*: requested 5000, available 4999 \(measured .*\)$/,
    ],
  ])("%s", async (_rule, arrange, request, status, code, detail) => {
    arrange();
    const refused = await refusalOf(h.client.createOperation(req(request())));
    // Validation alone is invalid_request (with the list); a business refusal is refused.
    const defaultCode =
      status === 422
        ? code === "invalid_request"
          ? "invalid_request"
          : "refused"
        : { 403: "not_allowed", 404: "not_found", 423: "locked" }[status as 403 | 404 | 423];
    expect([refused.status, refused.code, refused.context.reason]).toEqual([status, defaultCode, code]);
    if (code === "invalid_request") {
      expect(refused.detail).toEqual([{ field: expect.any(String), message: expect.stringMatching(detail) }]);
    } else {
      expect(refused.detail).toEqual(typeof detail === "string" ? detail : expect.stringMatching(detail));
    }
  });

  it("lets an admin bypass the grant, not the balance rules", async () => {
    const admin = h.fleet.addAgent(randomUUID(), { role: "admin" });
    const ok = await h.client.createOperation(req({ caller: session(admin, "admin"), simId: b2 }));
    expect(ok.operation?.simId).toBe(b2);
    h.fleet.sims.get(b2)!.balance_mirror = 10;
    const refused = await refusalOf(h.client.createOperation(req({ caller: session(admin, "admin"), simId: b2 })));
    expect([refused.code, refused.context.reason]).toEqual(["refused", "insufficient_balance"]);
  });

  it("lets a balance check run on an unmeasured SIM and skips the prefix rule", async () => {
    Object.assign(h.fleet.sims.get(b1)!, { balance_mirror: null, balance_updated_at: null });
    const res = await h.client.createOperation(req({ typeOp: "balance", montant: 1n, clientMsisdn: "000" }));
    expect(res.operation).toMatchObject({ status: "queued", opType: "balance", simId: b1 });
  });
});

describe("create operation: SIM selection against the store's load", () => {
  it("prefers SIMs that cover the amount, then the fewest in-flight operations", async () => {
    const admin = h.fleet.addAgent(randomUUID(), { role: "admin" });
    const as = (o: Partial<Req> = {}) => req({ caller: session(admin, "admin"), ...o });
    const first = await h.client.createOperation(as());
    const second = await h.client.createOperation(as());
    // Both cover 5000: the second goes to the SIM with nothing in flight.
    expect(new Set([first.operation?.simId, second.operation?.simId])).toEqual(new Set([b1, b2]));
    h.fleet.sims.get(b2)!.balance_mirror = 6000;
    const third = await h.client.createOperation(as({ montant: 7000n }));
    expect(third.operation?.simId).toBe(b1);
  });

  it("spreads concurrent creates over the SIMs: a create not yet committed counts as in flight on its SIM", async () => {
    const admin = h.fleet.addAgent(randomUUID(), { role: "admin" });
    const made = await Promise.all(
      Array.from({ length: 6 }, () => h.client.createOperation(req({ caller: session(admin, "admin") }))),
    );
    const onB1 = made.filter((m) => m.operation?.simId === b1).length;
    // Read at the same instant, the table shows both SIMs idle: without counting the
    // creates in progress, all six would go to b1 (the tie-break).
    // (A commit landing between two reads may shift one.)
    expect(Math.abs(onB1 - 3)).toBeLessThanOrEqual(1);
  });

  it("stores the selected SIM's handset, label and slot on the operation", async () => {
    const res = await h.client.createOperation(req());
    expect(res.operation).toMatchObject({ simId: b1, deviceId: "dev-1", deviceLabel: "Handset dev-1" });
    const [row] = await h.query(`select subscription_slot from dispatch.operations where operation_id = $1`, [
      res.operation!.operationId,
    ]);
    expect(row.subscription_slot).toBe(0);
  });
});

describe("create operation: what is stored", () => {
  it("takes the origin from the credential: assisted for a session whatever it sends, aggregated by default for the API key", async () => {
    const s = await h.client.createOperation(req({ origin: "aggregated" }));
    const k = await h.client.createOperation(req({ caller: apiKey(), agentId: agent }));
    const ka = await h.client.createOperation(req({ caller: apiKey(), agentId: agent, origin: "assisted" }));
    expect([s.operation?.origin, k.operation?.origin, ka.operation?.origin]).toEqual([
      "assisted",
      "aggregated",
      "assisted",
    ]);
  });

  it("takes agent_id from the session and ignores the body's", async () => {
    const res = await h.client.createOperation(req({ agentId: randomUUID() }));
    expect(res.operation?.agentId).toBe(agent);
  });

  it("stores the local destination, the recipient, the contact and partner_verified (false for account queries)", async () => {
    const res = await h.client.createOperation(
      req({ clientMsisdn: "+237 690 000 002", contactId: "c-42", partnerVerified: false }),
    );
    expect(res.operation).toMatchObject({
      msisdnDest: "690000002",
      destName: "Jean Dupont",
      contactId: "c-42",
      montant: 5000n,
    });
    const balance = await h.client.createOperation(req({ typeOp: "balance", montant: 1n, partnerVerified: true }));
    const rows = await h.query(
      `select operation_id, partner_verified from dispatch.operations where operation_id in ($1, $2) order by created_at`,
      [res.operation!.operationId, balance.operation!.operationId],
    );
    expect(rows.map((r) => r.partner_verified)).toEqual([false, false]);
  });

  it("publishes OperationChanged (trigger create) for the new operation", async () => {
    const res = await h.client.createOperation(req());
    const id = res.operation!.operationId;
    const ev = await eventually(() => eventsOf(h, "OperationChanged", id)[0], 5000, "the create event");
    expect(ev.topic).toBe("operations");
    const decoded = fromBinary(OperationChangedSchema, ev.value);
    expect([decoded.trigger, decoded.previousStatus, decoded.operation?.status]).toEqual(["create", "", "queued"]);
  });

  it("answers and publishes the operation exactly as stored (one statement writes row, event and announcement)", async () => {
    const res = await h.client.createOperation(req({ contactId: "c-1" }));
    const id = res.operation!.operationId;
    const stored = await h.client.getOperation({ caller: session(agent), operationId: id });
    expect(res.operation).toEqual(stored.operation);
    const ev = await eventually(() => eventsOf(h, "OperationChanged", id)[0], 5000, "the create event");
    expect(fromBinary(OperationChangedSchema, ev.value).operation).toEqual(stored.operation);
  });
});

describe("create operation: its statements", () => {
  it("reads the SIMs' loads inside the create's transaction, beside its insert (no transaction of their own)", async () => {
    const { statements, inTransaction, stop } = recordStatements();
    try {
      const res = await h.client.createOperation(req());
      expect(res.created).toBe(true);
    } finally {
      stop();
    }
    const at = (pattern: RegExp) => statements.flatMap((q, i) => (pattern.test(q) ? [i] : []));
    const loads = at(/jsonb_to_recordset\(\?::jsonb\) as s\(sim_id text, measured_at timestamptz\)/);
    const insert = at(/^\s*with ins as \(/);
    expect([loads.length, insert.length]).toEqual([1, 1]);
    expect([inTransaction[loads[0]!], inTransaction[insert[0]!]]).toEqual([true, true]);
    expect(loads[0]).toBeLessThan(insert[0]!);
  });

  it("sums a SIM's in-flight work and held debits from its indexes alone (op_type in their entries)", async () => {
    // Over a backlog (a thousand operations awaiting their SMS on a SIM) a read of the table
    // for op_type cost the create about 17 ms (docs/decisions/dispatch.md, "What remains").
    const { statements, stop } = recordStatements();
    try {
      await h.client.createOperation(req());
      await h.client.createOperation(req({ typeOp: "withdrawal", montant: 9000n, merchantCode: "123456" }));
    } finally {
      stop();
    }
    const loads = statements.find((q) => /jsonb_to_recordset\(\?::jsonb\) as s\(sim_id text/.test(q))!;
    await h.query(`vacuum analyze dispatch.operations`);
    const c = new pg.Client({ connectionString: h.databaseUrl });
    await c.connect();
    try {
      // Only what the index holds decides between an index-only scan and another index's
      // scan with heap reads: the table's size does not enter into it.
      await c.query(`set enable_seqscan = off; set enable_bitmapscan = off`);
      const measured = new Date().toISOString();
      const sims = [b1, a1].map((sim_id) => ({ sim_id, measured_at: measured }));
      let n = 0;
      const plan = await c.query(`explain ${loads.replace(/\?/g, () => `$${++n}`)}`, [
        JSON.stringify(sims),
        ...Array.from({ length: n - 1 }, () => 900),
      ]);
      const text = plan.rows.map((r: Record<string, string>) => r["QUERY PLAN"]).join("\n");
      expect(text).toMatch(/Index Only Scan using operations_sim_holding on operations/);
      // What may have left since the measurement: the SIM's entries changed after it.
      expect(text).toMatch(/operations_sim_changed/);
    } finally {
      await c.end();
    }
  });
});

describe("create operation: idempotent on request_id", () => {
  it("answers a repeat with the existing operation and never executes twice", async () => {
    const body = req();
    const first = await h.client.createOperation(body);
    const again = await h.client.createOperation(body);
    expect([first.created, again.created]).toEqual([true, false]);
    expect(again.operation?.operationId).toBe(first.operation?.operationId);
    expect(again.operation?.montant).toBe(5000n);
    // Another amount under the same request_id is not a repeat: refused, nothing executed.
    const other = await refusalOf(h.client.createOperation({ ...body, montant: 7000n }));
    expect([other.status, other.context.reason, other.context.differs]).toEqual([
      409,
      "request_id_reused",
      ["montant"],
    ]);
    const [{ n }] = await h.query(`select count(*)::int as n from dispatch.operations where request_id = $1`, [
      body.requestId,
    ]);
    expect(n).toBe(1);
  });

  it("answers a repeat with the existing operation once its gates would refuse it, and writes nothing for it", async () => {
    const body = req();
    const first = await h.client.createOperation(body);
    h.fleet.grants.clear();
    const refusedGate = await h.client.createOperation(body);
    h.fleet.grant(agent, { allowed_sim_ids: [b1, a1], allowed_op_types: ["deposit"], max_amount: 50_000 });
    const passedGates = await h.client.createOperation(body);
    for (const again of [refusedGate, passedGates]) {
      expect([again.created, again.operation?.operationId]).toEqual([false, first.operation?.operationId]);
    }
    const [{ events }] = await h.query(`select count(*)::int as events from dispatch.outbox where key = $1`, [
      first.operation!.operationId,
    ]);
    expect(events).toBe(1);
  });

  it("answers a repeat with the existing operation even once the breaker is on", async () => {
    const body = req();
    const first = await h.client.createOperation(body);
    h.fleet.breaker = true;
    const again = await h.client.createOperation(body);
    expect([again.created, again.operation?.operationId]).toEqual([false, first.operation?.operationId]);
  });

  it("keeps exactly one row when 20 repeats race", async () => {
    const body = req();
    const answers = await Promise.all(Array.from({ length: 20 }, () => h.client.createOperation(body)));
    const [{ n }] = await h.query(`select count(*)::int as n from dispatch.operations where request_id = $1`, [
      body.requestId,
    ]);
    expect(n).toBe(1);
    expect(answers.filter((a) => a.created)).toHaveLength(1);
    expect(new Set(answers.map((a) => a.operation?.operationId)).size).toBe(1);
    const [{ events }] = await h.query(`select count(*)::int as events from dispatch.outbox where key = $1`, [
      answers[0].operation!.operationId,
    ]);
    expect(events).toBe(1);
  });
});

describe("create operation: queued and running debits are reserved against the measured balance", () => {
  it("accepts one of five deposits of 8,000 on a SIM measured at 10,000, one after the other", async () => {
    h.fleet.sims.get(b1)!.balance_mirror = 10_000;
    const first = await h.client.createOperation(req({ montant: 8000n }));
    expect(first.created).toBe(true);
    for (let i = 0; i < 4; i++) {
      const refused = await refusalOf(h.client.createOperation(req({ montant: 8000n })));
      expect([refused.status, refused.context.reason]).toEqual([422, "insufficient_balance"]);
      expect(refused.context).toMatchObject({ sim_id: b1, available: 2000, reserved: 8000, measured_balance: 10_000 });
    }
    // What is left is still usable.
    expect((await h.client.createOperation(req({ montant: 2000n }))).created).toBe(true);
  });

  it("accepts exactly one of five concurrent deposits of 8,000, replays of one request_id still answered", async () => {
    h.fleet.sims.get(b1)!.balance_mirror = 10_000;
    const replayed = req({ montant: 8000n });
    const results = await Promise.allSettled([
      ...Array.from({ length: 5 }, () => h.client.createOperation(req({ montant: 8000n }))),
      ...Array.from({ length: 3 }, () => h.client.createOperation(replayed)),
    ]);
    const [{ n, total }] = await h.query(
      `select count(*)::int as n, sum(montant)::int as total from dispatch.operations where sim_id = $1`,
      [b1],
    );
    expect([n, total]).toEqual([1, 8000]);
    const replays = results.slice(5);
    const answered = replays.filter((r) => r.status === "fulfilled");
    // The replays either won or were answered with the winner, or all were refused together.
    for (const r of answered) expect(r.value.operation?.requestId).toBe(replayed.requestId);
    if (answered.length > 0) expect(answered).toHaveLength(3);
  });

  it("never lets concurrent creates overdraw a SIM measured far above their amounts", async () => {
    // Far from the limit for each create alone; together they cannot all pass.
    const balance = 10_600_000;
    h.fleet.sims.get(b1)!.balance_mirror = balance;
    h.fleet.sims.get(b2)!.balance_mirror = 0;
    const admin = h.fleet.addAgent(randomUUID(), { role: "admin" });
    const outcomes = await Promise.all(
      Array.from({ length: 25 }, () =>
        h.client.createOperation(req({ caller: session(admin, "admin"), montant: 500_000n })).then(
          () => "created",
          async (err: unknown) => (await refusalOf(Promise.reject(err))).context.reason,
        ),
      ),
    );
    const [{ total }] = await h.query(
      `select coalesce(sum(montant), 0)::bigint as total from dispatch.operations where sim_id = $1`,
      [b1],
    );
    const created = outcomes.filter((o) => o === "created").length;
    expect(Number(total)).toBe(500_000 * created);
    expect(Number(total)).toBeLessThanOrEqual(balance);
    expect(new Set(outcomes)).toEqual(new Set(["created", "insufficient_balance"]));
  });

  // The rule (store/operations.ts, `HELD_DEBITS`), one row per state a 9,000 debit can be in:
  // whether it still holds its 9,000 of a SIM measured at 10,000 an hour ago. Each state is
  // written as the flows leave it; a second 9,000 on that SIM is accepted only if it holds nothing.
  const now = () => new Date();
  const before = () => new Date(Date.now() - 2 * HOUR);
  /** Minutes before the measurement (an hour ago). */
  const beforeMeasurement = (minutes: number) => new Date(Date.now() - HOUR - minutes * 60_000);
  const actor = randomUUID();
  const states: [string, Record<string, unknown>, boolean][] = [
    ["queued", {}, true],
    ["running (claimed by its handset)", { status: "running", started_at: now() }, true],
    [
      "awaiting its proof after ussd_ok",
      { status: "awaiting_evidence", started_at: now(), device_outcome: "ussd_ok" },
      true,
    ],
    [
      "no_evidence after ussd_timeout",
      { status: "no_evidence", started_at: now(), device_outcome: "ussd_timeout" },
      true,
    ],
    ["no_evidence after the sweep", { status: "no_evidence", started_at: now(), device_outcome: "ussd_ok" }, true],
    [
      "settled arrived by a person (no balance read since)",
      { status: "confirmed", started_at: now(), decided_by: actor },
      true,
    ],
    [
      "confirmed by a proof received after the measurement",
      { status: "confirmed", started_at: now(), evidence_balance_after: 1000, evidence_received_at: now() },
      true,
    ],
    [
      "confirmed by a proof the measurement already counts",
      {
        status: "confirmed",
        started_at: before(),
        evidence_balance_after: 1000,
        evidence_received_at: before(),
        updated_at: before(),
      },
      false,
    ],
    [
      "failed by the handset (ussd_failed)",
      { status: "failed", started_at: now(), device_outcome: "ussd_failed" },
      false,
    ],
    ["failed on the name check", { status: "failed", started_at: now(), device_outcome: "name_mismatch" }, false],
    ["settled did_not_arrive by a person", { status: "failed", started_at: now(), decided_by: actor }, true],
    [
      "failed, then contradicted by the operator's proof",
      { status: "failed", started_at: now(), device_outcome: "ussd_failed", contradicting_message_id: "msg-late" },
      true,
    ],
    ["cancelled before dialling", { status: "rejected" }, false],
    [
      "cancelled while dialling, then reported ussd_ok",
      { status: "rejected", started_at: now(), device_outcome: "ussd_ok" },
      true,
    ],
    [
      "cancelled while dialling, then reported ussd_failed",
      { status: "rejected", started_at: now(), device_outcome: "ussd_failed" },
      false,
    ],
    // Changed before the measurement, but handed to a handset that never reported its dial,
    // less than the lease (RUNNING_TIMEOUT_S, 900 s) before it: the dial may have gone on
    // after the measurement, which then does not show it.
    [
      "no_evidence by its handset's deletion while it dialled, claimed 10 minutes before the measurement",
      { status: "no_evidence", started_at: beforeMeasurement(10), updated_at: beforeMeasurement(5) },
      true,
    ],
    [
      "cancelled while dialling, no report, claimed 10 minutes before the measurement",
      { status: "rejected", started_at: beforeMeasurement(10), updated_at: beforeMeasurement(5) },
      true,
    ],
    [
      "no_evidence by its handset's deletion while it dialled, claimed 20 minutes before the measurement",
      { status: "no_evidence", started_at: beforeMeasurement(20), updated_at: beforeMeasurement(15) },
      false,
    ],
    [
      "no_evidence after ussd_timeout reported before the measurement, claimed 10 minutes before it",
      {
        status: "no_evidence",
        started_at: beforeMeasurement(10),
        executed_at: beforeMeasurement(9),
        device_outcome: "ussd_timeout",
        updated_at: beforeMeasurement(5),
      },
      false,
    ],
  ];
  it.each(states.map(([state, columns, held]) => [state, held ? "holds" : "frees", columns, held] as const))(
    "a debit %s %s its amount",
    async (_state, _word, columns, held) => {
      h.fleet.sims.get(b1)!.balance_mirror = 10_000;
      h.fleet.sims.get(b1)!.balance_updated_at = new Date(Date.now() - HOUR);
      const first = await h.client.createOperation(req({ montant: 9000n }));
      expect(first.operation?.simId).toBe(b1);
      const names = Object.keys(columns);
      if (names.length > 0) {
        await h.query(
          `update dispatch.operations set ${names.map((n, i) => `${n} = $${i + 2}`).join(", ")}
          where operation_id = $1`,
          [first.operation!.operationId, ...Object.values(columns)],
        );
      }
      const second = await h.client.createOperation(req({ montant: 9000n })).then(
        (r) => (r.created ? "created" : "replay"),
        async (err: unknown) => (await refusalOf(Promise.reject(err))).context.reason,
      );
      expect(second).toBe(held ? "insufficient_balance" : "created");
    },
  );

  it("does not reserve withdrawals or finished debits", async () => {
    h.fleet.sims.get(b1)!.balance_mirror = 10_000;
    await h.client.createOperation(req({ typeOp: "withdrawal", montant: 9000n, merchantCode: "123456" }));
    const cancelled = await h.client.createOperation(req({ montant: 9000n }));
    await h.client.cancelOperation({ caller: session(agent), operationId: cancelled.operation!.operationId });
    // The agent may use b1 alone among operator_b's SIMs: the 9,000 fits only if neither the
    // withdrawal nor the cancelled (never dialled) deposit holds any of its 10,000.
    const third = await h.client.createOperation(req({ montant: 9000n }));
    expect([third.created, third.operation?.simId, third.operation?.status]).toEqual([true, b1, "queued"]);
  });
});

describe("create operation: a replayed request_id discloses nothing outside the caller's scope", () => {
  it("refuses another agent's replay with 409 request_id_taken, showing none of the operation", async () => {
    const body = req({ clientNom: "Secret Name", clientMsisdn: "690000077", montant: 4321n });
    const first = await h.client.createOperation(body);
    const other = h.fleet.addAgent(randomUUID(), { full_name: "Other Agent" });
    h.fleet.grant(other, { allowed_sim_ids: [b1, a1], allowed_op_types: ["deposit"], max_amount: 50_000 });
    const refused = await refusalOf(h.client.createOperation({ ...body, caller: session(other) }));
    expect([refused.status, refused.code, refused.context.reason]).toEqual([409, "conflict", "request_id_taken"]);
    const shown = JSON.stringify(refused);
    for (const secret of [first.operation!.operationId, "Secret Name", "690000077", "4321", b1, agent]) {
      expect(shown).not.toContain(secret);
    }
    const [{ n }] = await h.query(`select count(*)::int as n from dispatch.operations where request_id = $1`, [
      body.requestId,
    ]);
    expect(n).toBe(1);
  });

  it("answers the replay with the operation to the owner, an admin and the API key", async () => {
    const body = req();
    const first = await h.client.createOperation(body);
    for (const caller of [session(agent), session(randomUUID(), "admin"), apiKey()]) {
      const again = await h.client.createOperation({ ...body, caller, agentId: agent });
      expect([again.created, again.operation?.operationId]).toEqual([false, first.operation?.operationId]);
    }
  });
});

describe("create operation: manual replays (parent_operation_id) and retry flags", () => {
  async function failedOperation(): Promise<string> {
    const res = await h.client.createOperation(req());
    const id = res.operation!.operationId;
    await h.client.cancelOperation({ caller: session(agent), operationId: id });
    return id;
  }

  it("replays a rejected operation once; the parent then allows no further retry", async () => {
    const parent = await failedOperation();
    const before = await h.client.getOperation({ caller: session(agent), operationId: parent });
    expect([before.operation?.retryAllowed, before.operation?.retryRequiresConfirmation]).toEqual([true, false]);
    const retry = await h.client.createOperation(req({ parentOperationId: parent }));
    expect(retry.created).toBe(true);
    const after = await h.client.getOperation({ caller: session(agent), operationId: parent });
    expect([after.operation?.retryAllowed, after.operation?.retryRequiresConfirmation]).toEqual([false, undefined]);
    const second = await refusalOf(h.client.createOperation(req({ parentOperationId: parent })));
    expect([second.status, second.code, second.context.reason, second.detail]).toEqual([
      422,
      "refused",
      "retry_not_allowed",
      `Operation ${parent} already has a retry`,
    ]);
  });

  it("refuses to replay an operation still in flight", async () => {
    const res = await h.client.createOperation(req());
    const refused = await refusalOf(h.client.createOperation(req({ parentOperationId: res.operation!.operationId })));
    expect([refused.status, refused.code, refused.context.reason]).toEqual([422, "refused", "retry_not_allowed"]);
  });

  it("lets one of several racing replays of one operation through", async () => {
    const parent = await failedOperation();
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, () => h.client.createOperation(req({ parentOperationId: parent }))),
    );
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const [{ n }] = await h.query(`select count(*)::int as n from dispatch.operations where parent_operation_id = $1`, [
      parent,
    ]);
    expect(n).toBe(1);
  });
});

describe("create operation: who may call", () => {
  it.each([
    ["a device", { kind: "device", deviceId: "dev-1" }],
    ["no caller", undefined],
  ])("refuses %s with 403", async (_who, caller) => {
    const refused = await refusalOf(h.client.createOperation(req({ caller: caller as never })));
    expect([refused.status, refused.code, refused.context.reason]).toEqual([403, "not_allowed", "caller_not_allowed"]);
  });

  it("requires agent_id from the API key", async () => {
    const refused = await refusalOf(h.client.createOperation(req({ caller: apiKey(), agentId: "" })));
    expect([refused.status, refused.detail]).toEqual([
      422,
      [{ field: "agent_id", message: "agent_id is required with the API key" }],
    ]);
  });
});
