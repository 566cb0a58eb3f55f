import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, startTestSystem, type TestSystem } from "../../../../test/support/system.ts";
import { grantAccess, provisionHandset } from "../../../../test/support/fleet-fixtures.ts";

// The double-launch protections of the contract, each switched off in turn by intake's
// test-only switch (INTAKE_TEST_DISABLE_PROTECTION), shown to leave one operation when
// 20 agents launch one transaction at once; and a launch that crashes between the
// claim and the operation's creation (INTAKE_TEST_CRASH_AFTER_CLAIM), completed by a
// retried launch or by the sweep without a second operation.

interface Fleet {
  sys: TestSystem;
  admin: { token: string; agentId: string };
  agents: { token: string; agentId: string }[];
}

async function startFleet(
  env: Record<string, string>,
  agentCount: number,
  role: "agent" | "admin" = "agent",
): Promise<Fleet> {
  const sys = await startTestSystem({ DEVICE_COOLDOWN_S: "0", ...env });
  const admin = await sys.api.bootstrapAdmin();
  const { sims } = await provisionHandset(sys.api, admin.token, { operators: ["operator_b"], balance: 300_000 });
  const agents = [];
  for (let i = 0; i < agentCount; i++) {
    const a = await sys.api.createAgent(admin.token, { login: `racer-${i}`, role });
    await grantAccess(sys.api, admin.token, a.agentId, { simIds: [sims[0]!.simId] });
    agents.push(a);
  }
  return { sys, admin, agents };
}

async function confirmedTransaction(f: Fleet): Promise<string> {
  const res = await f.sys.api.post("/v1/transactions", {
    apiKey: true,
    body: {
      request_id: `req-${randomUUID()}`,
      contact_id: "contact-1",
      receiver_name: "Marie-Claire Ngo",
      receiver_phone: "690111222",
      operator: "operator_b",
      received_amount_xaf: 5000,
    },
  });
  expect(res.status).toBe(201);
  const confirmed = await f.sys.api.post(`/v1/transactions/${res.body.id}/payment-confirmation`, {
    token: f.agents[0]!.token,
  });
  expect(confirmed.status).toBe(200);
  return res.body.id;
}

const launch = (f: Fleet, id: string, token: string) => f.sys.api.post(`/v1/transactions/${id}/launch`, { token });
const operationsOf = (f: Fleet, id: string) =>
  f.sys.db.query(`select operation_id, request_id from dispatch.operations where request_id like $1`, [`tx-${id}%`]);
const launchEvents = async (f: Fleet, id: string) =>
  (
    await f.sys.db.query(
      `select count(*)::int as n from intake.outbox where key = $1 and type like '%TransactionChanged'`,
      [id],
    )
  )[0].n as number;

describe.each([
  ["claim", "the operation request_id and the unique operation_id index"],
  ["request_id", "the claim and the unique operation_id index"],
  ["unique_operation", "the claim and the operation request_id"],
] as const)("with protection %s switched off", (protection, others) => {
  let f: Fleet;
  beforeAll(async () => {
    // Admins see every transaction, so every racer gets past the read to the claim (an
    // agent reading another's launch would stop at 404 and never test the other two).
    f = await startFleet({ INTAKE_TEST_DISABLE_PROTECTION: protection }, 20, "admin");
  }, 180_000);
  afterAll(async () => {
    await f?.sys.stop();
  });

  it(`still gives 20 agents launching at once one operation: ${others} hold`, async () => {
    const id = await confirmedTransaction(f);
    const results = await Promise.all(f.agents.map((a) => launch(f, id, a.token)));
    const won = results.filter((r) => r.status === 200);
    expect(won).toHaveLength(1);
    for (const r of results.filter((x) => x.status !== 200)) {
      expect(`${r.status} ${r.body.context.reason}`).toBe("409 already_launched");
    }
    const ops = await operationsOf(f, id);
    expect(ops).toHaveLength(1);
    const t = await f.sys.api.get(`/v1/transactions/${id}`, { token: f.admin.token });
    expect(t.body).toMatchObject({ state: "launched", operation_id: won[0]!.body.operation_id });
    expect(ops[0].operation_id).toBe(won[0]!.body.operation_id);

    // The switch really is off.
    if (protection === "claim") {
      // Every racer claimed (create + confirm + one claim + one record would be 4 events).
      expect(await launchEvents(f, id)).toBe(2 + 20 + 1);
    } else if (protection === "request_id") {
      expect(ops[0].request_id).not.toBe(`tx-${id}`);
    } else {
      const idx = await f.sys.db.query(
        `select 1 from pg_indexes where schemaname = 'intake' and indexname = 'transactions_operation_id'`,
      );
      expect(idx).toEqual([]);
    }
  });
});

describe("a launch that crashes between the claim and the operation's creation", () => {
  it("is completed by the same agent's retried launch once the claim is stale, with one operation", async () => {
    const f = await startFleet(
      { INTAKE_TEST_CRASH_AFTER_CLAIM: "1", CLAIM_STALE_S: "2", LAUNCH_SWEEP_INTERVAL_S: "3600" },
      1,
    );
    try {
      const id = await confirmedTransaction(f);
      const token = f.agents[0]!.token;
      expect((await launch(f, id, token)).status).toBe(500);
      const stranded = await f.sys.api.get(`/v1/transactions/${id}`, { token });
      expect(stranded.body).toMatchObject({ state: "launched", operation_id: null, launched_by: f.agents[0]!.agentId });
      expect(await operationsOf(f, id)).toEqual([]);
      // While the claim is fresh, a retry is refused: the first launch may still be running.
      const early = await launch(f, id, token);
      expect(early.status).toBe(409);
      expect(early.body.context.reason).toBe("already_launched");
      const completed = await eventually(
        async () => {
          const r = await launch(f, id, token);
          return r.status === 200 ? r : undefined;
        },
        10_000,
        "the retried launch to complete",
      );
      expect(completed.body).toMatchObject({ transaction_id: id, state: "launched" });
      const ops = await operationsOf(f, id);
      expect(ops).toEqual([{ operation_id: completed.body.operation_id, request_id: `tx-${id}` }]);
      expect((await launch(f, id, token)).status).toBe(409);
    } finally {
      await f.sys.stop();
    }
  }, 180_000);

  it("is completed by the sweep, with one operation; so is one that crashed after dispatch created it", async () => {
    const f = await startFleet(
      {
        INTAKE_TEST_CRASH_AFTER_CLAIM: "1",
        INTAKE_TEST_CRASH_AFTER_CREATE: "1",
        CLAIM_STALE_S: "1",
        LAUNCH_SWEEP_INTERVAL_S: "0.5",
      },
      1,
    );
    try {
      const id = await confirmedTransaction(f);
      expect((await launch(f, id, f.agents[0]!.token)).status).toBe(500);
      const swept = await eventually(
        async () => {
          const t = (await f.sys.api.get(`/v1/transactions/${id}`, { token: f.admin.token })).body;
          return t.operation_id ? t : undefined;
        },
        15_000,
        "the sweep to complete the launch",
      );
      expect(swept).toMatchObject({ state: "launched", launched_by: f.agents[0]!.agentId });
      expect(await operationsOf(f, id)).toEqual([{ operation_id: swept.operation_id, request_id: `tx-${id}` }]);

      // The second launch crashes after dispatch created the operation: the sweep records that one.
      const second = await confirmedTransaction(f);
      expect((await launch(f, second, f.agents[0]!.token)).status).toBe(500);
      const created = await operationsOf(f, second);
      expect(created).toHaveLength(1);
      const recorded = await eventually(
        async () => {
          const t = (await f.sys.api.get(`/v1/transactions/${second}`, { token: f.admin.token })).body;
          return t.operation_id ? t : undefined;
        },
        15_000,
        "the sweep to record the operation",
      );
      expect(recorded.operation_id).toBe(created[0].operation_id);
      expect(await operationsOf(f, second)).toHaveLength(1);
    } finally {
      await f.sys.stop();
    }
  }, 180_000);
});
