import { randomBytes } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import {
  createLogger,
  MemoryBus,
  served,
  serviceClient,
  startGrpcServer,
  type Caller,
  type GrpcServer,
  type RunningService,
} from "@transferops/kit";
import { CallerSchema } from "@transferops/kit/gen/transferops/common/v1/identity_pb";
import { DispatchService } from "@transferops/kit/gen/transferops/dispatch/v1/dispatch_service_pb";
import { EvidenceService } from "@transferops/kit/gen/transferops/evidence/v1/evidence_service_pb";
import { FleetService } from "@transferops/kit/gen/transferops/fleet/v1/fleet_service_pb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../../../test/infra/context.ts";
import { eventually, startTestSystem, type TestSystem } from "../../../../test/support/system.ts";
import {
  createSim,
  grantAccess,
  provisionHandset,
  recordBalance,
  setCircuitBreaker,
} from "../../../../test/support/fleet-fixtures.ts";
import { startFleet } from "../app.ts";
import { loadFleetConfig, LOCAL_PIN_KEYS } from "../config.ts";
import { UNKNOWN_ID, LOCAL_WEBHOOKS } from "../../../../test/support/constants.ts";
import { recordStatements } from "../../../../test/support/statements.ts";

// The RPCs other services call, through a real gRPC transport: against the whole test
// system, and against a fleet of its own whose dispatch and evidence are fakes on real ports.

const NEW_KEY = "k2026:" + randomBytes(32).toString("base64");

let sys: TestSystem;
let fleet: Client<typeof FleetService>;
let admin: { token: string; agentId: string };
const extraLogs: string[] = [];
const swappedSimIds: string[] = [];
const started: { stop(): Promise<void> }[] = [];

beforeAll(async () => {
  // The webhook targets this machine: http and loopback allowed explicitly, as an operator would.
  sys = await startTestSystem(LOCAL_WEBHOOKS);
  fleet = serviceClient(FleetService, sys.system.serviceUrls.fleet);
  admin = await sys.api.bootstrapAdmin();
});
afterAll(async () => {
  for (const s of started.reverse()) await s.stop().catch(() => undefined);
  await sys?.stop();
});

const codeOf = async (p: Promise<unknown>) => {
  try {
    await p;
    return "ok";
  } catch (err) {
    return err instanceof ConnectError ? Code[err.code] : String(err);
  }
};

/** Another fleet instance on a database of its choice, logging into extraLogs. */
async function anotherFleet(
  env: Record<string, string>,
): Promise<{ fleet: RunningService; client: Client<typeof FleetService> }> {
  const log = createLogger("fleet-2", {
    level: "debug",
    destination: { write: (l: string) => void extraLogs.push(l) },
  });
  const bus = new MemoryBus();
  const f = await startFleet({ config: loadFleetConfig({ NODE_ENV: "test", ...env }), port: 0, bus, log });
  started.push(f, { stop: () => bus.close() });
  return { fleet: f, client: serviceClient(FleetService, f.url) };
}

const adminCaller = (agentId: string): Caller =>
  create(CallerSchema, { kind: "session", agentId, role: "admin", isActive: true, fullName: "Root Admin" });

describe("GetDispatchContext", () => {
  it("gives the breaker, the agent, its grant, and every SIM of the operator with handset and balance", async () => {
    const agent = await sys.api.createAgent(admin.token, { login: "ctx-agent", full_name: "Ctx Agent" });
    const { device, sims } = await provisionHandset(sys.api, admin.token, {
      operators: ["operator_a", "operator_b"],
      label: "Ctx handset",
    });
    const loose = await createSim(sys.api, admin.token, { operator: "operator_a" });
    const observed = new Date(Date.now() - 5_000);
    await recordBalance(sys.api, sims[0].simId, 77_000, { observedAt: observed });
    await grantAccess(sys.api, admin.token, agent.agentId, {
      simIds: [sims[0].simId],
      opTypes: ["deposit"],
      maxAmount: 100_000,
    });

    const res = await fleet.getDispatchContext({ agentId: agent.agentId, operator: "operator_a", opType: "deposit" });
    expect(res.breakerActive).toBe(false);
    expect(res.agent).toMatchObject({
      agentId: agent.agentId,
      fullName: "Ctx Agent",
      role: "agent",
      isActive: true,
      exists: true,
    });
    expect(res.grant).toMatchObject({
      agentId: agent.agentId,
      allowedSimIds: [sims[0].simId],
      allowedOpTypes: ["deposit"],
      maxAmount: 100_000n,
    });
    const byId = new Map(res.sims.map((s) => [s.simId, s]));
    expect(res.sims.every((s) => s.operator === "operator_a")).toBe(true);
    expect(byId.get(sims[0].simId)).toMatchObject({
      msisdn: sims[0].msisdn,
      status: "active",
      deviceId: device.deviceId,
      deviceStatus: "active",
      deviceLabel: "Ctx handset",
      subscriptionSlot: 0,
      balanceMirror: 77_000n,
    });
    expect(byId.get(sims[0].simId)!.balanceUpdatedAt).toEqual(timestampFromDate(observed));
    const unassigned = byId.get(loose.simId)!;
    expect([
      unassigned.deviceId,
      unassigned.deviceStatus,
      unassigned.subscriptionSlot,
      unassigned.balanceMirror,
      unassigned.balanceUpdatedAt,
    ]).toEqual([undefined, undefined, undefined, undefined, undefined]);
    expect(byId.has(sims[1].simId)).toBe(false);
  });

  it("narrows to the named SIM (empty when unknown), reaches every operator with an empty operator, and reports the breaker", async () => {
    const { sims } = await provisionHandset(sys.api, admin.token, { operators: ["operator_b"] });
    const named = await fleet.getDispatchContext({
      agentId: admin.agentId,
      operator: "operator_b",
      opType: "balance",
      simId: sims[0].simId,
    });
    expect(named.sims.map((s) => s.simId)).toEqual([sims[0].simId]);
    expect(named.grant).toBeUndefined();
    expect(
      (
        await fleet.getDispatchContext({
          agentId: admin.agentId,
          operator: "operator_b",
          opType: "deposit",
          simId: UNKNOWN_ID,
        })
      ).sims,
    ).toEqual([]);
    expect(
      (
        await fleet.getDispatchContext({
          agentId: admin.agentId,
          operator: "operator_b",
          opType: "deposit",
          simId: "junk",
        })
      ).sims,
    ).toEqual([]);
    const all = await fleet.getDispatchContext({ agentId: admin.agentId, operator: "", opType: "deposit" });
    expect(new Set(all.sims.map((s) => s.operator))).toEqual(new Set(["operator_a", "operator_b"]));
    const ghost = await fleet.getDispatchContext({ agentId: UNKNOWN_ID, operator: "operator_a", opType: "deposit" });
    expect(ghost.agent).toMatchObject({ exists: false, role: "", isActive: false });
    // One statement joins them: an agent unknown or no UUID leaves the SIMs and the breaker whole.
    expect(ghost.grant).toBeUndefined();
    expect(ghost.sims.map((s) => s.simId).sort()).toEqual(
      (await fleet.getDispatchContext({ agentId: admin.agentId, operator: "operator_a", opType: "deposit" })).sims
        .map((s) => s.simId)
        .sort(),
    );
    expect(ghost.sims.length).toBeGreaterThan(0);
    const junk = await fleet.getDispatchContext({ agentId: "junk", operator: "operator_b", simId: sims[0].simId });
    expect(junk.agent).toMatchObject({ agentId: "junk", exists: false });
    expect(junk.sims.map((s) => s.simId)).toEqual([sims[0].simId]);
    expect(junk.breakerActive).toBe(false);
    await setCircuitBreaker(sys.api, admin.token, true);
    try {
      const tripped = await fleet.getDispatchContext({
        agentId: admin.agentId,
        operator: "operator_b",
        opType: "deposit",
      });
      expect(tripped.breakerActive).toBe(true);
      expect(tripped.sims.find((s) => s.simId === sims[0].simId)?.deviceStatus).toBe("frozen");
    } finally {
      await sys.api.post("/v1/admin/circuit-breaker/lift", { token: admin.token });
    }
  });
});

describe("GetAgentScope, LookupSim, Authenticate", () => {
  it("gives an agent's granted SIMs and role; exists false for an unknown agent", async () => {
    const agent = await sys.api.createAgent(admin.token, { login: "scope-agent", role: "supervisor" });
    const sim = await createSim(sys.api, admin.token);
    expect(await fleet.getAgentScope({ agentId: agent.agentId })).toMatchObject({
      allowedSimIds: [],
      role: "supervisor",
      isActive: true,
      exists: true,
    });
    await grantAccess(sys.api, admin.token, agent.agentId, { simIds: [sim.simId] });
    expect((await fleet.getAgentScope({ agentId: agent.agentId })).allowedSimIds).toEqual([sim.simId]);
    expect(await fleet.getAgentScope({ agentId: UNKNOWN_ID })).toMatchObject({
      exists: false,
      allowedSimIds: [],
      role: "",
    });
  });

  it("looks a SIM up, NotFound when unknown", async () => {
    const { device, sims } = await provisionHandset(sys.api, admin.token, { balance: 900 });
    const { sim } = await fleet.lookupSim({ simId: sims[0].simId });
    expect(sim).toMatchObject({
      simId: sims[0].simId,
      operator: "operator_a",
      msisdn: sims[0].msisdn,
      status: "active",
      deviceId: device.deviceId,
      subscriptionSlot: 0,
      balanceMirror: 900n,
    });
    expect(await codeOf(fleet.lookupSim({ simId: UNKNOWN_ID }))).toBe("NotFound");
    expect(await codeOf(fleet.lookupSim({ simId: "junk" }))).toBe("NotFound");
  });

  it("authenticates a device token as a device caller with its id and label", async () => {
    const { device } = await provisionHandset(sys.api, admin.token, { label: "Auth handset" });
    const { caller } = await fleet.authenticate({ credentialKind: "bearer", secret: device.token });
    expect(caller).toMatchObject({
      kind: "device",
      deviceId: device.deviceId,
      deviceLabel: "Auth handset",
      agentId: "",
    });
    expect(await codeOf(fleet.authenticate({ credentialKind: "bearer", secret: device.token + "x" }))).toBe(
      "Unauthenticated",
    );
  });
});

describe("RecordProvenBalance", () => {
  it("applies a proven reading with the balance route's rules, audited with the message id", async () => {
    const sim = await createSim(sys.api, admin.token);
    await sys.api.patch(`/v1/sims/${sim.simId}`, { token: admin.token, body: { low_balance_threshold: 10_000 } });
    const t1 = new Date(Date.now() - 10_000);
    const first = await fleet.recordProvenBalance({
      simId: sim.simId,
      balance: 20_000n,
      observedAt: timestampFromDate(t1),
      source: "sms",
      messageId: "msg-1",
    });
    expect([first.applied, first.previousBalance, first.balance]).toEqual([true, undefined, 20_000n]);
    const second = await fleet.recordProvenBalance({
      simId: sim.simId,
      balance: 4_000n,
      observedAt: timestampFromDate(new Date()),
      source: "sms",
      messageId: "msg-2",
    });
    expect([second.applied, second.previousBalance, second.balance]).toEqual([true, 20_000n, 4_000n]);
    const older = await fleet.recordProvenBalance({
      simId: sim.simId,
      balance: 1n,
      observedAt: timestampFromDate(t1),
      source: "sms",
      messageId: "msg-0",
    });
    expect([older.applied, older.previousBalance, older.balance]).toEqual([false, 4_000n, 4_000n]);
    const sim1 = (await sys.api.get(`/v1/sims/${sim.simId}`, { token: admin.token })).body;
    expect(sim1).toMatchObject({ balance_mirror: 4000, balance_source: "sms" });
    const audit = await sys.db.query(
      `select action, details from fleet.audit_log where target_id = $1 and action like 'sim.balance%' order by id`,
      [sim.simId],
    );
    expect(audit.map((a) => [a.action, a.details.message_id, a.details.previous_balance, a.details.balance])).toEqual([
      ["sim.balance", "msg-1", null, 20000],
      ["sim.balance", "msg-2", 20000, 4000],
      ["sim.balance_ignored", "msg-0", 4000, 1],
    ]);
    await eventually(
      async () => {
        const list = (await sys.api.get("/v1/admin/notifications", { token: admin.token })).body as {
          kind: string;
          sim_id: string;
        }[];
        return list.some((n) => n.kind === "low_balance" && n.sim_id === sim.simId) ? true : undefined;
      },
      30_000,
      "the low balance alert of a proven reading",
    );
    expect(
      await codeOf(fleet.recordProvenBalance({ simId: sim.simId, balance: -1n, source: "sms", messageId: "x" })),
    ).toBe("InvalidArgument");
    expect(
      await codeOf(
        fleet.recordProvenBalance({
          simId: sim.simId,
          balance: 1n,
          observedAt: timestampFromDate(new Date(Date.now() + 3600_000)),
          source: "sms",
          messageId: "x",
        }),
      ),
    ).toBe("InvalidArgument");
    expect(
      await codeOf(fleet.recordProvenBalance({ simId: UNKNOWN_ID, balance: 1n, source: "sms", messageId: "x" })),
    ).toBe("NotFound");
  });
});

describe("statements of a confirmed transfer's fleet steps", () => {
  it("records a proven balance with its audit row in the balance's statement; reveals a PIN with its audit row in its transaction's one statement", async () => {
    const sim = await createSim(sys.api, admin.token, { pin: "11223344" });
    // Only fleet's statements of these steps: the in-process system's other work runs beside them.
    const ours = (r: { statements: string[]; inTransaction: boolean[] }) =>
      r.statements.flatMap((q, i) =>
        /fleet\.sims s where s\.id = \? for update|fleet\.audit_log|balance_mirror = \?|pin_ciphertext/.test(q)
          ? [[q.replace(/\s+/g, " ").trim().slice(0, 60), r.inTransaction[i]]]
          : [],
      );
    const balance = recordStatements();
    try {
      await fleet.recordProvenBalance({
        simId: sim.simId,
        balance: 50_000n,
        observedAt: timestampFromDate(new Date()),
        source: "sms",
        messageId: "msg-s",
      });
    } finally {
      balance.stop();
    }
    expect(ours(balance)).toEqual([
      [expect.stringMatching(/^select s\.id, s\.operator/), true],
      [expect.stringMatching(/^with audited as \( ?insert into fleet\.audit_log/), true],
    ]);
    const reveal = recordStatements();
    try {
      expect((await fleet.revealPin({ simId: sim.simId, operationId: UNKNOWN_ID })).pin).toBe("11223344");
    } finally {
      reveal.stop();
    }
    // The reveal keeps its transaction, so that a PIN that does not open rolls its audit back.
    expect(ours(reveal)).toEqual([
      [expect.stringMatching(/^with sealed as \( select s\.pin_key_id, s\.pin_ciphertext/), true],
    ]);
    const audit = await sys.db.query(
      `select action from fleet.audit_log where target_id = $1 and action in ('sim.balance', 'sim.pin_revealed') order by id`,
      [sim.simId],
    );
    expect(audit.map((a) => a.action)).toEqual(["sim.balance", "sim.pin_revealed"]);
  });
});

describe("RevealPin and PIN encryption", () => {
  it("reveals a SIM's PIN to dispatch and audits the operation, never the PIN", async () => {
    const sim = await createSim(sys.api, admin.token, { pin: "90817263" });
    const operationId = "55555555-5555-4555-8555-555555555555";
    expect((await fleet.revealPin({ simId: sim.simId, operationId })).pin).toBe("90817263");
    const audit = await sys.db.query(
      `select actor_agent_id, details, details::text as text from fleet.audit_log where action = 'sim.pin_revealed' and target_id = $1`,
      [sim.simId],
    );
    expect(audit).toHaveLength(1);
    expect(audit[0].details.operation_id).toBe(operationId);
    expect(audit[0].text).not.toContain("90817263");
    expect(await codeOf(fleet.revealPin({ simId: UNKNOWN_ID, operationId }))).toBe("NotFound");
  });

  it("reveals to a device only while the token its caller names stands: revoked or replaced, nothing revealed or audited", async () => {
    const { device, sims } = await provisionHandset(sys.api, admin.token);
    const simId = sims[0].simId;
    const versionOf = async (token: string) =>
      (await fleet.authenticate({ credentialKind: "bearer", secret: token })).caller!.deviceTokenVersion;
    const first = await versionOf(device.token);
    expect(first).toMatch(/^\d+$/);
    const reveal = (deviceTokenVersion: string) =>
      fleet.revealPin({ simId, operationId: UNKNOWN_ID, deviceId: device.deviceId, deviceTokenVersion });
    const reveals = async () =>
      (
        await sys.db.query(
          `select count(*)::int as n from fleet.audit_log where action = 'sim.pin_revealed' and target_id = $1`,
          [simId],
        )
      )[0].n as number;

    expect((await reveal(first)).pin).toBe(sims[0].pin);
    expect(await reveals()).toBe(1);
    expect(await codeOf(reveal("12345"))).toBe("Unauthenticated");
    const issued = await sys.api.post(`/v1/devices/${device.deviceId}/token`, { token: admin.token });
    const second = await versionOf((issued.body as { device_token: string }).device_token);
    expect(second).not.toBe(first);
    expect(await codeOf(reveal(first))).toBe("Unauthenticated");
    expect((await reveal(second)).pin).toBe(sims[0].pin);
    await sys.api.delete(`/v1/devices/${device.deviceId}/token`, { token: admin.token });
    expect(await codeOf(reveal(second))).toBe("Unauthenticated");
    expect(await codeOf(reveal(""))).toBe("Unauthenticated");
    expect(await reveals()).toBe(2);
  });

  it("reveals to the device that holds the SIM now: another device gets where the SIM went, nothing revealed or audited", async () => {
    const holder = await provisionHandset(sys.api, admin.token);
    const other = await provisionHandset(sys.api, admin.token);
    const simId = holder.sims[0].simId;
    const versionOf = async (token: string) =>
      (await fleet.authenticate({ credentialKind: "bearer", secret: token })).caller!.deviceTokenVersion;
    const revealTo = async (d: { deviceId: string; token: string }) =>
      fleet.revealPin({
        simId,
        operationId: UNKNOWN_ID,
        deviceId: d.deviceId,
        deviceTokenVersion: await versionOf(d.token),
      });
    const reveals = async () =>
      (
        await sys.db.query(
          `select count(*)::int as n from fleet.audit_log where action = 'sim.pin_revealed' and target_id = $1`,
          [simId],
        )
      )[0].n as number;

    const moved = await revealTo(other.device);
    expect(moved.pin).toBe("");
    expect(moved.moved?.deviceId).toBe(holder.device.deviceId);
    expect(await reveals()).toBe(0);
    expect((await revealTo(holder.device)).pin).toBe(holder.sims[0].pin);
    expect(await reveals()).toBe(1);
  });

  it("reveals to a claim that names no token version (an older gateway, which authenticated the device just before, during a rolling upgrade) only while the device has a live token", async () => {
    const { device, sims } = await provisionHandset(sys.api, admin.token);
    const reveal = () =>
      fleet.revealPin({
        simId: sims[0].simId,
        operationId: UNKNOWN_ID,
        deviceId: device.deviceId,
        deviceTokenVersion: "",
      });
    expect((await reveal()).pin).toBe(sims[0].pin);
    await sys.api.delete(`/v1/devices/${device.deviceId}/token`, { token: admin.token });
    expect(await codeOf(reveal())).toBe("Unauthenticated");
  });

  it("does not decrypt a PIN ciphertext swapped between two SIMs (the SIM id is associated data)", async () => {
    const a = await createSim(sys.api, admin.token, { pin: "11112222" });
    const b = await createSim(sys.api, admin.token, { pin: "33334444" });
    swappedSimIds.push(a.simId, b.simId);
    await sys.db.query(
      `update fleet.sims s set pin_ciphertext = o.pin_ciphertext from fleet.sims o
        where (s.id = $1 and o.id = $2) or (s.id = $2 and o.id = $1)`,
      [a.simId, b.simId],
    );
    for (const sim of [a, b]) {
      const err = await fleet
        .revealPin({ simId: sim.simId, operationId: UNKNOWN_ID })
        .catch((e: unknown) => e as ConnectError);
      expect(err).toBeInstanceOf(ConnectError);
      expect((err as ConnectError).code).toBe(Code.Internal);
      expect(String((err as ConnectError).message)).not.toMatch(/11112222|33334444/);
    }
    expect(
      await sys.db.query(`select 1 from fleet.audit_log where action = 'sim.pin_revealed' and target_id in ($1, $2)`, [
        a.simId,
        b.simId,
      ]),
    ).toEqual([]);
  });

  it("keeps every PIN readable across a key rotation: the new key seals, the old one still opens", async () => {
    const old = await createSim(sys.api, admin.token, { pin: "24681357" });
    // The rotated fleet: new key first, old key still listed.
    const rotated = await anotherFleet({
      DATABASE_URL: sys.db.url,
      PIN_ENCRYPTION_KEYS: `${NEW_KEY},${LOCAL_PIN_KEYS}`,
    });
    expect((await rotated.client.revealPin({ simId: old.simId, operationId: UNKNOWN_ID })).pin).toBe("24681357");
    const { sim: fresh } = await rotated.client.createSim({
      caller: adminCaller(admin.agentId),
      operator: "operator_b",
      msisdn: "699123456",
      pin: "5555",
    });
    const [row] = await sys.db.query(`select pin_key_id from fleet.sims where id = $1`, [fresh!.simId]);
    expect(row.pin_key_id).toBe("k2026");
    expect((await rotated.client.revealPin({ simId: fresh!.simId, operationId: UNKNOWN_ID })).pin).toBe("5555");
    // The fleet that knows only the old key cannot open what the new key sealed.
    expect(await codeOf(fleet.revealPin({ simId: fresh!.simId, operationId: UNKNOWN_ID }))).toBe("Internal");
    // Every PIN stays readable by the rotated fleet.
    // Every PIN stays readable by the rotated fleet (but those whose ciphertexts were swapped on purpose).
    const ids = (await sys.db.query(`select id from fleet.sims where not (id = any($1::uuid[]))`, [swappedSimIds])).map(
      (r) => r.id as string,
    );
    expect(ids.length).toBeGreaterThan(5);
    const answers = await Promise.all(
      ids.map((id) => codeOf(rotated.client.revealPin({ simId: id, operationId: UNKNOWN_ID }))),
    );
    expect(answers.every((c) => c === "ok")).toBe(true);
  });
});

describe("with dispatch and evidence on real ports (fakes)", () => {
  let own: Client<typeof FleetService>;
  let db: TestDatabase;
  const resetCalls: string[] = [];
  let activity = { queuedOrRunning: 0 };

  beforeAll(async () => {
    const log = createLogger("fakes", { level: "silent" });
    const dispatch: GrpcServer = await startGrpcServer({
      name: "fake-dispatch",
      port: 0,
      log,
      services: [
        served(DispatchService, {
          getSimActivity: (req) => ({
            queuedOrRunning: activity.queuedOrRunning,
            totalOperations: 3,
            totalConfirmed: 1,
            totalFailed: 1,
            totalNoEvidence: 1,
            operations: [
              {
                operationId: "66666666-6666-4666-8666-666666666666",
                status: "confirmed",
                opType: "deposit",
                montant: 5000n,
                msisdnDest: "670111222",
                createdAt: timestampFromDate(new Date("2026-03-01T08:00:00Z")),
                finishedAt: timestampFromDate(new Date("2026-03-01T08:01:00Z")),
              },
            ].map((o) => ({ ...o, operationId: req.simId ? o.operationId : "" })),
          }),
          resetOperations: (req) => {
            resetCalls.push(`dispatch:${req.caller?.agentId}`);
            return { deleted: { operations: 7n, device_queue: 2n }, queuePurged: true };
          },
          getSweepBacklog: () => ({ pastWindowNotSwept: 4, unprovenWaiting: 9 }),
        }),
      ],
    });
    const evidence: GrpcServer = await startGrpcServer({
      name: "fake-evidence",
      port: 0,
      log,
      services: [
        served(EvidenceService, {
          resetEvidence: (req) => {
            resetCalls.push(`evidence:${req.caller?.agentId}`);
            return { deleted: { evidences: 11n, daily_reconciliations: 3n } };
          },
        }),
      ],
    });
    started.push({ stop: () => dispatch.close() }, { stop: () => evidence.close() });
    db = await freshDatabase();
    started.push({ stop: () => db.drop() });
    own = (
      await anotherFleet({
        DATABASE_URL: db.url,
        DISPATCH_URL: dispatch.url,
        EVIDENCE_URL: evidence.url,
        BOOTSTRAP_TOKEN: "b",
      })
    ).client;
  });

  it("refuses to unassign a SIM with operations queued or running (409 sim_busy), allows it once idle", async () => {
    const caller = adminCaller(UNKNOWN_ID);
    const { deviceId } = await own.createDevice({ caller, label: "Busy handset" });
    const { sim } = await own.createSim({
      caller,
      operator: "operator_a",
      msisdn: "670999888",
      pin: "1234",
      deviceId,
      subscriptionSlot: 0,
    });
    activity = { queuedOrRunning: 2 };
    const err = await own.unassignSim({ caller, simId: sim!.simId }).catch((e: unknown) => e as ConnectError);
    expect((err as ConnectError).code).toBe(Code.AlreadyExists);
    expect((err as ConnectError).rawMessage).toContain("2 operation(s) queued or running");
    activity = { queuedOrRunning: 0 };
    const { sim: after } = await own.unassignSim({ caller, simId: sim!.simId });
    expect([after!.simId, after!.deviceId, after!.subscriptionSlot]).toEqual([sim!.simId, undefined, undefined]);
  });

  it("derives a SIM's history from dispatch's operations", async () => {
    const caller = adminCaller(UNKNOWN_ID);
    const { sim } = await own.createSim({ caller, operator: "operator_b", msisdn: "690999888", pin: "1234" });
    const res = await own.getSimHistory({ caller, simId: sim!.simId });
    expect(res).toMatchObject({
      simId: sim!.simId,
      totalOperations: 3,
      totalConfirmed: 1,
      totalFailed: 1,
      totalNoEvidence: 1,
    });
    expect(res.balanceMirror).toBeUndefined();
    expect(res.operations).toHaveLength(1);
    expect(res.operations[0]).toMatchObject({
      operationId: "66666666-6666-4666-8666-666666666666",
      status: "confirmed",
      montant: 5000n,
    });
  });

  it("reports the sweep backlog in fleet health", async () => {
    const res = await own.getFleetHealth({ caller: adminCaller(UNKNOWN_ID) });
    expect(res).toMatchObject({ pastWindowNotSwept: 4, unprovenWaiting: 9, notes: [] });
  });

  it("resets across services: dispatch's and evidence's counts join fleet's in the answer and the one audit row", async () => {
    const caller = adminCaller(UNKNOWN_ID);
    const refused = await codeOf(own.resetProductionData({ caller, confirm: "RESET SERVICE PRODUCTION DATA." }));
    expect(refused).toBe("FailedPrecondition");
    expect(resetCalls).toEqual([]);
    const res = await own.resetProductionData({ caller, confirm: "RESET SERVICE PRODUCTION DATA" });
    expect(resetCalls).toEqual([`dispatch:${UNKNOWN_ID}`, `evidence:${UNKNOWN_ID}`]);
    expect(res.cleaned).toBe(true);
    expect(res.queuePurged).toBe(true);
    expect(res.deleted).toMatchObject({
      operations: 7n,
      device_queue: 2n,
      evidences: 11n,
      daily_reconciliations: 3n,
      devices: 1n,
      sims: 2n,
    });
    const pg = await import("pg");
    const client = new pg.default.Client({ connectionString: db.url });
    await client.connect();
    try {
      const { rows } = await client.query(`select details from fleet.audit_log where action = 'reset.production_data'`);
      expect(rows).toHaveLength(1);
      expect(rows[0].details.deleted).toMatchObject({
        operations: 7,
        evidences: 11,
        daily_reconciliations: 3,
        sims: 2,
      });
      expect(rows[0].details.queue_purged).toBe(true);
    } finally {
      await client.end();
    }
  });
});

describe("secrets", () => {
  it("never writes a PIN, a device token, a password or a webhook secret to any log", async () => {
    const pin = "86420975";
    const sim = await createSim(sys.api, admin.token, { pin });
    await fleet.revealPin({ simId: sim.simId, operationId: UNKNOWN_ID });
    const { device } = await provisionHandset(sys.api, admin.token);
    await sys.api.get("/v1/device/me", { token: device.token });
    const agent = await sys.api.createAgent(admin.token, { login: "secret-agent", password: "s3cret-agent-password" });
    const hook = await sys.api.post("/v1/admin/webhooks", {
      token: admin.token,
      body: { url: "http://127.0.0.1:9/x", secret: "webhook-secret-never-logged" },
    });
    expect(hook.status).toBe(201);
    const bad = await sys.api.post("/v1/sims", {
      token: admin.token,
      body: { operator: "operator_a", msisdn: "bad", pin: "97531246" },
    });
    expect(bad.status).toBe(422);
    expect(JSON.stringify(bad.body)).not.toContain("97531246");
    const all = [...sys.logs, ...extraLogs].join("\n");
    expect(sys.logs.some((l) => /"level":"debug"/.test(l))).toBe(true);
    for (const secret of [
      pin,
      "24681357",
      "90817263",
      "97531246",
      device.token,
      agent.password,
      "root-password-1",
      "webhook-secret-never-logged",
      agent.token,
    ]) {
      expect(all).not.toContain(secret);
    }
  });
});
