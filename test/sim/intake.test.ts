// Intake's bookkeeping in the simulation: which transaction creates count as acknowledged
// (invariant 5 checks each exists at the end).
import { describe, expect, it } from "vitest";
import type { Reply, SimContext } from "./context.ts";
import { Intake } from "./intake.ts";
import { Random } from "./random.ts";

const ID = "00000000-0000-4000-9000-000000000001";

/** An Intake whose gateway answers the create with `create`, and the read-back with `stored(sent)`. */
function intakeAnswering(create: Reply, stored: (sent: Record<string, unknown>) => Reply) {
  const calls: string[] = [];
  const notes: string[] = [];
  let sent: Record<string, unknown> = {};
  const context = {
    random: new Random(7),
    http: (_gw: string, method: string, path: string, _auth: unknown, body?: unknown) => {
      calls.push(`${method} ${path}`);
      if (method === "POST") sent = body as Record<string, unknown>;
      return Promise.resolve(method === "POST" ? create : stored(sent));
    },
    gatewayUrls: ["http://gw"],
    adminToken: "admin",
    note: (_ids: string[], line: string) => void notes.push(line),
  } as unknown as SimContext;
  return { intake: new Intake(context), calls, notes };
}

/** Runs one create (request id sim-7-1-tx). */
async function create(intake: Intake): Promise<void> {
  await intake.prepare("txCreate", 1, "http://gw")();
}

const conflict: Reply = {
  status: 409,
  body: { code: "conflict", context: { reason: "request_id_exists", transaction_id: ID } },
};

describe("intake's transaction creates in the simulation", () => {
  it("counts a 201 acknowledged", async () => {
    const { intake } = intakeAnswering({ status: 201, body: { id: ID, receiver_phone: "670112233" } }, () => conflict);
    await create(intake);
    expect(intake.created).toEqual([{ requestId: "sim-7-1-tx", id: ID, via: "201" }]);
  });

  it("counts a 409 request_id_exists to a create tried again acknowledged, once the stored transaction is the one sent", async () => {
    // The read-back answers what the create sent (its request id, amount and receiver).
    const { intake, calls } = intakeAnswering(conflict, (sent) => ({
      status: 200,
      body: { ...sent, id: ID, state: "pending" },
    }));
    await create(intake);
    expect(calls).toEqual(["POST /v1/transactions", `GET /v1/transactions/${ID}`]);
    expect(intake.created).toEqual([{ requestId: "sim-7-1-tx", id: ID, via: "409 request_id_exists" }]);
    expect(intake.transactions.map((t) => [t.id, t.state])).toEqual([[ID, "pending"]]);
  });

  it("reports a 409 whose stored transaction is not the one sent, and counts nothing", async () => {
    const { intake, notes } = intakeAnswering(conflict, () => ({
      status: 200,
      body: { id: ID, request_id: "sim-7-1-tx", received_amount_xaf: 1, receiver_phone: "690000000" },
    }));
    await create(intake);
    expect(intake.created).toEqual([]);
    expect(notes.filter((l) => l.startsWith("VIOLATION-CANDIDATE(4) "))).toHaveLength(1);
  });

  it("counts no other 409", async () => {
    const { intake, calls } = intakeAnswering(
      { status: 409, body: { code: "conflict", context: { reason: "something_else", transaction_id: ID } } },
      () => ({ status: 200, body: {} }),
    );
    await create(intake);
    expect(calls).toEqual(["POST /v1/transactions"]);
    expect(intake.created).toEqual([]);
  });
});
