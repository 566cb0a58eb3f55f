import { randomUUID } from "node:crypto";
import { createClient, type Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import pg from "pg";
import { afterAll, beforeAll } from "vitest";
import { createLogger, errorBodyFromConnect, MemoryBus, type BusMessage, type Caller } from "@transferops/kit";
import type { MessageInitShape } from "@bufbuild/protobuf";
import {
  DispatchService,
  type CreateOperationRequestSchema,
} from "@transferops/kit/gen/transferops/dispatch/v1/dispatch_service_pb";
import { freshDatabase, type TestDatabase } from "../infra/context.ts";
import { startDispatch, type RunningDispatch } from "../../services/dispatch/src/app.ts";
import { loadDispatchConfig } from "../../services/dispatch/src/config.ts";
import { FakeFleet } from "./dispatch-fakes.ts";
import { connectErrorOf } from "./refusal.ts";

export { eventually } from "./eventually.ts";

export interface DispatchHarness {
  client: Client<typeof DispatchService>;
  fleet: FakeFleet;
  service: RunningDispatch;
  /** Every event published, in order. */
  events: BusMessage[];
  bus: MemoryBus;
  logs: string[];
  query(sql: string, params?: unknown[]): Promise<any[]>;
  /** The service's database, for a test that needs a connection of its own (session settings). */
  databaseUrl: string;
  /** Moves the service's clock (it starts at the real time). */
  clock: { offsetMs: number };
  stop(): Promise<void>;
}

/**
 * The harness of one test file: started before its tests (with `env`), handed to `use`,
 * stopped after them. The file's own `beforeAll` hooks, registered after this call, run after it.
 *
 *   let h: DispatchHarness;
 *   useDispatchHarness({ DEVICE_COOLDOWN_S: "0" }, (started) => (h = started));
 */
export function useDispatchHarness(env: Record<string, string>, use: (h: DispatchHarness) => unknown): void {
  let h: DispatchHarness | undefined;
  beforeAll(async () => {
    h = await startDispatchHarness(env);
    use(h);
  });
  afterAll(async () => {
    await h?.stop();
  });
}

/**
 * Dispatch alone, through a real gRPC server on port 0, on a fresh PostgreSQL database,
 * with fleet faked in memory and the in-process bus. For RPC and store tests.
 */
export async function startDispatchHarness(env: Record<string, string> = {}): Promise<DispatchHarness> {
  const db: TestDatabase = await freshDatabase();
  const pool = new pg.Pool({ connectionString: db.url, max: 4 });
  // Dropping the test database terminates idle pooled connections: expected, not a failure.
  pool.on("error", () => undefined);
  const logs: string[] = [];
  const log = createLogger("dispatch", { level: "debug", destination: { write: (l: string) => void logs.push(l) } });
  const bus = new MemoryBus();
  const events: BusMessage[] = [];
  const tap = await bus.subscribe(`tap-${randomUUID()}`, ["operations", "alerts"], async (m) => {
    events.push(m);
  });
  const fleet = new FakeFleet();
  const clock = { offsetMs: 0 };
  const config = loadDispatchConfig({
    NODE_ENV: "test",
    DATABASE_URL: db.url,
    SWEEP_INTERVAL_S: "3600",
    ...env,
  });
  const service = await startDispatch({
    config,
    port: 0,
    bus,
    log,
    fleet,
    now: () => new Date(Date.now() + clock.offsetMs),
  });
  const client = createClient(DispatchService, createGrpcTransport({ baseUrl: service.url }));
  return {
    client,
    fleet,
    service,
    events,
    bus,
    logs,
    clock,
    query: async (sql, params) => (await pool.query(sql, params as unknown[])).rows,
    databaseUrl: db.url,
    async stop() {
      await service.stop();
      await tap.close();
      await bus.close();
      await pool.end();
      await db.drop();
    },
  };
}

export const session = (
  agentId: string,
  role: "agent" | "supervisor" | "admin" = "agent",
  fullName = "Ada Agent",
): Caller =>
  ({
    kind: "session",
    agentId,
    role,
    isActive: true,
    fullName,
    deviceId: "",
    sessionId: randomUUID(),
    login: "ada",
    deviceLabel: "",
  }) as Caller;
export const apiKey = (): Caller =>
  ({
    kind: "api_key",
    agentId: "",
    role: "",
    isActive: false,
    fullName: "",
    deviceId: "",
    sessionId: "",
    login: "",
    deviceLabel: "",
  }) as Caller;
export const device = (deviceId: string): Caller =>
  ({
    kind: "device",
    agentId: "",
    role: "",
    isActive: false,
    fullName: "",
    deviceId,
    sessionId: "",
    login: "",
    deviceLabel: deviceId,
  }) as Caller;

/** The HTTP status and contract body a failed call would get at the gateway; throws if the call succeeded. */
export async function refusalOf(
  call: Promise<unknown>,
): Promise<{ status: number; code: string; detail: unknown; context: Record<string, unknown> }> {
  const { status, body } = errorBodyFromConnect(await connectErrorOf(call));
  return { status, code: body.code, detail: body.detail, context: body.context };
}

/** Events published so far of one type (the short name, e.g. `OperationChanged`), optionally for one key. */
export function eventsOf(h: DispatchHarness, type: string, key?: string) {
  return h.events.filter((e) => e.headers["event-type"].endsWith(`.${type}`) && (key === undefined || e.key === key));
}

/** A handset of its own with one operator_b SIM (PIN `pin`) granted to the agent. */
export function addHandset(
  h: DispatchHarness,
  agentId: string,
  o: { slot?: number; pin?: string } = {},
): { deviceId: string; simId: string } {
  const deviceId = `dev-${randomUUID().slice(0, 8)}`;
  const simId = randomUUID();
  h.fleet.addSim(
    { sim_id: simId, operator: "operator_b", device_id: deviceId, subscription_slot: o.slot ?? 1 },
    o.pin ?? "8642",
  );
  const granted = h.fleet.grants.get(agentId)?.allowed_sim_ids ?? [];
  h.fleet.grant(agentId, {
    allowed_sim_ids: [...granted, simId],
    allowed_op_types: ["deposit", "balance", "withdrawal"],
  });
  return { deviceId, simId };
}

/** Queues a 5,000 FCFA deposit by the agent on the SIM; its operation id. */
export async function queueOn(
  h: DispatchHarness,
  agentId: string,
  simId: string,
  o: Partial<Omit<MessageInitShape<typeof CreateOperationRequestSchema>, "$typeName" | "$unknown">> = {},
): Promise<string> {
  const res = await h.client.createOperation({
    caller: session(agentId, "agent", "Ada Agent"),
    requestId: randomUUID(),
    operator: "operator_b",
    clientMsisdn: "690000001",
    clientNom: "Jean Dupont",
    montant: 5000n,
    simId,
    ...o,
  });
  return res.operation!.operationId;
}
