// How often the network's faults end on the right operation (docs/decisions/evidence.md,
// "Coherent match"). The simulated handset dials through the whole system (gateway, dispatch,
// fleet, evidence, PostgreSQL, Kafka) and the simulated operator answers with its SMS, hurt by one
// fault per scenario: repeated by the handset or by the network, both copies at once, reordered,
// delivered after the evidence window, or racing a same-amount operation nobody dialled. Each
// operation's proof is then compared with the SMS the network sent about it (its reference).
//
// "Right": the operation is confirmed by its own SMS. "Wrong": confirmed by another operation's.
// Where the texts can tell the operations apart (another amount or another destination) every
// operation must end right; where they cannot (same amount, same number, one proof late) the
// contract's order decides and the table prints what happened, and the money rules still hold:
// each operation proven at most once, each SMS proves at most one operation.

import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, startTestSystem, type TestSystem } from "../../../../test/support/system.ts";
import { grantAccess } from "../../../../test/support/fleet-fixtures.ts";
import { handsetWorld } from "../../../../test/support/handset-world.ts";
import { TEST_PIN } from "../../../../test/support/constants.ts";
import type { SimulatedHandset } from "../../../../test/simulator/index.ts";
import type { OperatorSms, SmsFault } from "../../../../test/simulator/operator-sms.ts";

const ROUNDS = Number(process.env.FAULT_ROUNDS ?? 2);
const CUSTOMERS = ["690111222", "690111333"] as const;

let sys: TestSystem;
let admin: { token: string; agentId: string };
let agent: { token: string; agentId: string };
let simId: string;
let handset: SimulatedHandset;
let sms: OperatorSms;
let nextAmount = 1_000;

beforeAll(async () => {
  sys = await startTestSystem({
    DEVICE_COOLDOWN_S: "0",
    EVIDENCE_WINDOW_S: "3",
    LATE_EVIDENCE_S: "3600",
    SWEEP_INTERVAL_S: "0.5",
  });
  admin = await sys.api.bootstrapAdmin();
  agent = await sys.api.createAgent(admin.token, { login: "fault-agent", full_name: "Fatou Faults" });
  const world = await handsetWorld(sys.api, sys.url, admin.token, {
    label: "Fault handset",
    sims: [{ operator: "operator_b", pin: TEST_PIN }],
    balance: 5_000_000,
    customers: { [CUSTOMERS[0]]: "Marie-Claire Ngo", [CUSTOMERS[1]]: "Blaise Fotso" },
    seed: 23,
  });
  ({ handset, sms } = world);
  simId = world.sims[0].simId;
  await grantAccess(sys.api, admin.token, agent.agentId, { simIds: [simId], opTypes: ["deposit"] });
});
afterAll(async () => {
  await sys?.stop();
});

const amount = (): number => (nextAmount += 100);

async function create(montant: number, msisdn: string = CUSTOMERS[0]): Promise<string> {
  const res = await sys.api.post("/v1/operations", {
    apiKey: true,
    body: {
      request_id: randomUUID(),
      agent_id: agent.agentId,
      operator: "operator_b",
      sim_id: simId,
      client: { msisdn, nom: "Client" },
      montant,
    },
  });
  expect(res.status).toBe(202);
  return res.body.operation_id;
}

/** The handset claims and dials `id`; the network's SMS about it suffer `fault`. */
async function dial(id: string, fault?: SmsFault): Promise<void> {
  if (fault) sms.failNext(fault);
  await eventually(
    async () => ((await handset.pollOnce()).operation?.operation_id === id ? true : undefined),
    20_000,
    `the handset to dial ${id}`,
  );
}

const get = async (id: string) => (await sys.api.get(`/v1/operations/${id}`, { token: admin.token })).body;
const until = (id: string, status: string) =>
  eventually(async () => ((await get(id)).status === status ? true : undefined), 20_000, `${id} ${status}`);

interface Tally {
  operations: number;
  right: number;
  wrong: number;
  unproven: number;
}
const table = new Map<string, Tally>();

/** Compares each operation's proof with the reference the network sent about it. */
async function judge(scenario: string, ids: string[]): Promise<Tally> {
  const sentRef = new Map<string, string>();
  for (const d of sms.deliveries) {
    if (d.sms.about.operationId && d.sms.about.reference) sentRef.set(d.sms.about.operationId, d.sms.about.reference);
  }
  const t = table.get(scenario) ?? { operations: 0, right: 0, wrong: 0, unproven: 0 };
  const proofs = new Set<string>();
  for (const id of ids) {
    const op = await get(id);
    t.operations++;
    if (op.status !== "confirmed" || !op.evidence) {
      t.unproven++;
      continue;
    }
    // One SMS proves one operation at most.
    expect(proofs.has(op.evidence.operator_ref)).toBe(false);
    proofs.add(op.evidence.operator_ref);
    if (op.evidence.operator_ref === sentRef.get(id)) t.right++;
    else t.wrong++;
  }
  table.set(scenario, t);
  return t;
}

const everyRound = (name: string, run: () => Promise<string[]>, distinguishable = true) =>
  it(name, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const ids = await run();
      const t = await judge(name, ids);
      if (distinguishable) expect([t.wrong, t.unproven], name).toEqual([0, 0]);
      else expect(t.unproven, name).toBe(0);
    }
  });

describe("the network's faults end on the right operation", () => {
  everyRound("no fault", async () => {
    const a = await create(amount());
    await dial(a);
    await until(a, "confirmed");
    return [a];
  });

  everyRound("repeated by the handset (same client id)", async () => {
    const a = await create(amount());
    await dial(a, { kind: "duplicated", by: "handset" });
    await until(a, "confirmed");
    return [a];
  });

  everyRound("repeated by the network (two client ids: a restatement)", async () => {
    const a = await create(amount());
    await dial(a, { kind: "duplicated", by: "operator" });
    await until(a, "confirmed");
    return [a];
  });

  everyRound("both copies at once", async () => {
    const a = await create(amount());
    await dial(a, { kind: "duplicated", by: "operator", concurrent: true });
    await until(a, "confirmed");
    return [a];
  });

  everyRound("reordered, other amounts", async () => {
    const a = await create(amount());
    const b = await create(amount());
    await dial(a, { kind: "reordered" });
    await dial(b);
    await Promise.all([until(a, "confirmed"), until(b, "confirmed")]);
    return [a, b];
  });

  everyRound("reordered, same amount to other numbers", async () => {
    const x = amount();
    const a = await create(x, CUSTOMERS[0]);
    const b = await create(x, CUSTOMERS[1]);
    await dial(a, { kind: "reordered" });
    await dial(b);
    await Promise.all([until(a, "confirmed"), until(b, "confirmed")]);
    return [a, b];
  });

  everyRound("delivered after the evidence window (late proof)", async () => {
    const a = await create(amount());
    await dial(a, { kind: "delayed" });
    await until(a, "no_evidence");
    await sms.releaseDelayed();
    await until(a, "confirmed");
    return [a];
  });

  everyRound("late, while a same-amount operation to another number is active", async () => {
    const x = amount();
    const a = await create(x, CUSTOMERS[0]);
    await dial(a, { kind: "delayed" });
    await until(a, "no_evidence");
    const b = await create(x, CUSTOMERS[1]);
    await dial(b, { kind: "delayed" });
    await sms.releaseDelayed(); // a's SMS first, then b's
    await Promise.all([until(a, "confirmed"), until(b, "confirmed")]);
    return [a, b];
  });

  everyRound("a same-amount operation queued and never dialled", async () => {
    const x = amount();
    const a = await create(x);
    await dial(a, { kind: "delayed" });
    const queued = await create(x);
    await sms.releaseDelayed();
    await until(a, "confirmed");
    expect((await get(queued)).status).toBe("queued");
    expect((await sys.api.post(`/v1/operations/${queued}/cancel`, { token: agent.token })).status).toBe(200);
    return [a];
  });

  everyRound(
    "late, while a same-amount operation to the same number is active (the texts cannot tell them apart)",
    async () => {
      const x = amount();
      const a = await create(x);
      await dial(a, { kind: "delayed" });
      await until(a, "no_evidence");
      const b = await create(x);
      await dial(b, { kind: "delayed" });
      await sms.releaseDelayed();
      await Promise.all([until(a, "confirmed"), until(b, "confirmed")]);
      return [a, b];
    },
    false,
  );

  afterAll(() => {
    const rows = [...table].map(([scenario, t]) => ({
      scenario,
      operations: t.operations,
      right: `${t.right} (${((100 * t.right) / Math.max(1, t.operations)).toFixed(0)} %)`,
      wrong: t.wrong,
      unproven: t.unproven,
    }));
    // The figures the decisions file quotes: printed on every run.
    console.log(`\nSimulated faults, ${ROUNDS} round(s) each: which operation each proof ended on`);
    console.table(rows);
  });
});
