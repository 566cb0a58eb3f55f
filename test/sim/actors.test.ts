// One seed, one sequence of actions and inputs: the simulation's choices come from its seed only.
import { describe, expect, it } from "vitest";
import { OperatorSms } from "../simulator/operator-sms.ts";
import { SimulatedOperator } from "../simulator/operator.ts";
import { Actors, type Answer, type OperationRow, type SimHandset } from "./actors.ts";
import { Random } from "./random.ts";

/**
 * The actions a seed chooses and the calls they make, against a gateway that answers 409 to
 * everything but intake's creates, wording rules' drafts and webhooks' registrations (201,
 * numbered ids), so that transactions, rules and webhooks exist to launch, rewrite, activate,
 * retire, rotate and delete. The second handset is operator_b's.
 */
async function sequence(seed: number, steps: number): Promise<string[]> {
  const rows = new Map<string, OperationRow>();
  for (let i = 0; i < 6; i++)
    rows.set(`00000000-0000-4000-8000-00000000000${i}`, {
      operation_id: `00000000-0000-4000-8000-00000000000${i}`,
      status: ["queued", "running", "no_evidence", "failed", "awaiting_evidence", "rejected"][i],
      sim_id: "sim-0",
      montant: 1000 * (i + 1),
      op_type: "deposit",
    });
  const handsets = [0, 1].map((index) => ({
    index,
    deviceId: `device-${index}`,
    token: `token-${index}`,
    simId: `sim-${index}`,
    msisdn: `${index ? 69 : 67}000000${index}`,
    operator: index ? "operator_b" : "operator_a",
    revoked: false,
    busy: true, // a busy handset does not poll: no dial, no SMS
  })) as SimHandset[];
  const calls: string[] = [];
  let made = 0;
  const actors = new Actors({
    gatewayUrls: ["http://gw-1", "http://gw-2"],
    apiKey: "key",
    random: new Random(seed),
    operator: new SimulatedOperator(),
    handsets,
    adminToken: "admin",
    secondAdminToken: "admin-2",
    agents: [{ agentId: "agent-0", token: "t0", login: "a0", active: true, role: "agent" }],
    webhookBaseUrl: "http://127.0.0.1:9",
    rows: () => rows,
    snapshotBalances: () => Promise.resolve(new Map()),
    onCreate: () => undefined,
    note: () => undefined,
    log: () => undefined,
  });
  for (const h of handsets)
    h.sms = new OperatorSms({
      baseUrl: "http://gw-1",
      token: h.token,
      seed,
      transport: actors.transportFor(h, () => "http://gw-1"),
    });
  actors.http = (gateway, method, path, _auth, body): Promise<Answer> => {
    // An SMS's times and the simulator's client ids are the moment's: its sender and its kind are the seed's.
    const shown =
      path === "/v1/device/messages"
        ? (body as { messages: { sender: string; raw: string }[] }).messages.map(
            (m) => `${m.sender}: ${m.raw.slice(0, 12)}`,
          )
        : body;
    calls.push(`${gateway} ${method} ${path} ${JSON.stringify(shown ?? null)}`);
    const id = `00000000-0000-4000-9000-${String(++made).padStart(12, "0")}`;
    const created =
      method === "POST" && path === "/v1/transactions"
        ? { id, receiver_phone: "670112233" }
        : method === "POST" && path === "/v1/admin/wording-rules"
          ? { version_id: id, rule_id: id }
          : method === "POST" && path === "/v1/admin/webhooks"
            ? { webhook_id: id, secret: `whsec_${id}`, events: (body as { events?: string[] }).events ?? [] }
            : undefined;
    return Promise.resolve({ status: created ? 201 : 409, body: created ?? {}, retryAfter: null, at: 0, route: path });
  };
  const out: string[] = [];
  for (let i = 0; i < steps; i++) {
    const { action, run } = actors.next();
    await run();
    out.push(action, ...calls.splice(0));
  }
  return out;
}

describe("the simulation's choices", () => {
  it("are the same for the same seed, actions and their calls alike", { timeout: 60_000 }, async () => {
    const a = await sequence(42, 500);
    expect(await sequence(42, 500)).toEqual(a);
    expect(new Set(a.filter((l) => !l.startsWith("http"))).size).toBeGreaterThan(10);
    // Intake's and the admins' actors draw from the same seed: transactions launched, rules drafted
    // and activated, webhooks registered and deleted; automation's creates name operator_b too;
    // agents record and list matching operations, admins record fleet limits.
    for (const call of [
      "/launch",
      "/payment-confirmation",
      "POST /v1/admin/wording-rules",
      "/activate",
      "POST /v1/admin/webhooks",
      "DELETE /v1/admin/webhooks/",
      '"operator":"operator_b"',
      "POST /v1/operations/matching",
      "GET /v1/operations/matching",
      "PATCH /v1/admin/limits",
    ])
      expect(
        a.some((l) => l.includes(call)),
        call,
      ).toBe(true);
  });

  it("differ from one seed to another", { timeout: 60_000 }, async () => {
    expect(await sequence(43, 150)).not.toEqual(await sequence(42, 150));
  });
});
