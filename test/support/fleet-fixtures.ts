// Fleet fixtures for gateway tests: handsets, SIMs, balances, grants and heartbeats through
// the real routes, so every test provisions the fleet the way an admin would.
//
//   const admin = await sys.api.bootstrapAdmin();
//   const device = await registerDevice(sys.api, admin.token);
//   const sim = await createSim(sys.api, admin.token, { operator: "operator_a", deviceId: device.deviceId, slot: 0 });
//   await recordBalance(sys.api, sim.simId, 250_000);
//   await grantAccess(sys.api, admin.token, agent.agentId, { simIds: [sim.simId] });

import { randomUUID } from "node:crypto";
import { toBinary, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { createLogger, csv, KafkaBus } from "@transferops/kit";
import { bearer, dataOf, type Api, type ApiResponse } from "./api.ts";

export type Operator = "operator_a" | "operator_b";

export interface Device {
  deviceId: string;
  /** Bearer token of the handset (returned once at registration). */
  token: string;
  label: string;
}

export interface Sim {
  simId: string;
  operator: Operator;
  msisdn: string;
  pin: string;
  deviceId: string | null;
  slot: 0 | 1 | null;
}

function expectStatus(res: ApiResponse, status: number, what: string): void {
  if (res.status !== status) throw new Error(`${what} failed: ${res.status} ${JSON.stringify(res.body)}`);
}

let counter = 0;
const base = Math.floor(Math.random() * 1_000_000);
/** A fresh 9-digit MSISDN (unique in this test process) with a prefix of the operator: 670... or 690... */
export function uniqueMsisdn(operator: Operator = "operator_a"): string {
  counter += 1;
  const tail = String((base + counter) % 1_000_000).padStart(6, "0");
  return (operator === "operator_a" ? "670" : "690") + tail;
}

/** Registers a handset (POST /v1/devices) and returns its id and token. */
export async function registerDevice(api: Api, adminToken: string, label = `Handset ${++counter}`): Promise<Device> {
  const created = dataOf(
    "register device",
    await api.client.POST("/v1/devices", { headers: bearer(adminToken), body: { label } }),
  );
  return { deviceId: created.device_id, token: created.device_token, label };
}

/** Creates a SIM (POST /v1/sims), optionally in a device slot. */
export async function createSim(
  api: Api,
  adminToken: string,
  o: { operator?: Operator; msisdn?: string; pin?: string; deviceId?: string; slot?: 0 | 1 } = {},
): Promise<Sim> {
  const operator = o.operator ?? "operator_a";
  const msisdn = o.msisdn ?? uniqueMsisdn(operator);
  // Eight digits: a shorter PIN can turn up by chance in ids and numbers of a body or a log.
  const pin = o.pin ?? "48260913";
  const slot =
    o.deviceId !== undefined ? { device_id: o.deviceId, subscription_slot: String(o.slot ?? 0) as "0" | "1" } : {};
  const sim = dataOf(
    "create SIM",
    await api.client.POST("/v1/sims", { headers: bearer(adminToken), body: { operator, msisdn, pin, ...slot } }),
  );
  return {
    simId: sim.sim_id,
    operator,
    msisdn,
    pin,
    deviceId: o.deviceId ?? null,
    slot: o.deviceId !== undefined ? (o.slot ?? 0) : null,
  };
}

/** A handset with one SIM per given operator in slots 0 and 1, each with a measured balance. */
export async function provisionHandset(
  api: Api,
  adminToken: string,
  o: { operators?: Operator[]; balance?: number; label?: string } = {},
): Promise<{ device: Device; sims: Sim[] }> {
  const device = await registerDevice(api, adminToken, o.label);
  const sims: Sim[] = [];
  for (const [slot, operator] of (o.operators ?? ["operator_a"]).entries()) {
    const sim = await createSim(api, adminToken, { operator, deviceId: device.deviceId, slot: slot as 0 | 1 });
    if (o.balance !== undefined) await recordBalance(api, sim.simId, o.balance);
    sims.push(sim);
  }
  return { device, sims };
}

/** Records a measured balance with the API key (PATCH /v1/sims/{id}/balance). */
export async function recordBalance(
  api: Api,
  simId: string,
  balance: number,
  o: { observedAt?: Date; source?: "sms" | "balance_check" | "api" | "n8n" } = {},
): Promise<ApiResponse> {
  const res = await api.patch(`/v1/sims/${simId}/balance`, {
    apiKey: true,
    body: {
      balance,
      ...(o.observedAt ? { observed_at: o.observedAt.toISOString() } : {}),
      ...(o.source ? { source: o.source } : {}),
    },
  });
  expectStatus(res, 200, "record balance");
  return res;
}

/** Sets an agent's access grant (PATCH /v1/admin/agents/{id}/access). */
export async function grantAccess(
  api: Api,
  adminToken: string,
  agentId: string,
  o: { simIds: string[]; opTypes?: string[]; maxAmount?: number },
): Promise<ApiResponse> {
  const res = await api.patch(`/v1/admin/agents/${agentId}/access`, {
    token: adminToken,
    body: {
      allowed_sim_ids: o.simIds,
      ...(o.opTypes ? { allowed_op_types: o.opTypes } : {}),
      ...(o.maxAmount ? { max_amount: o.maxAmount } : {}),
    },
  });
  expectStatus(res, 200, "grant access");
  return res;
}

/** Sends a heartbeat with the device token (POST /v1/device/heartbeat). */
export async function sendHeartbeat(
  api: Api,
  deviceToken: string,
  o: {
    sims?: { sim_id: string; present: boolean; signal?: number }[];
    report?: Record<string, unknown> | null;
    battery?: number;
    extra?: Record<string, unknown>;
  } = {},
): Promise<ApiResponse> {
  const res = await api.post("/v1/device/heartbeat", {
    token: deviceToken,
    body: {
      app_version: "1.2.0",
      battery: o.battery ?? 80,
      network: "4G",
      sims: (o.sims ?? []).map((s) => ({ signal: 3, ...s })),
      ...(o.report !== undefined ? { report: o.report } : {}),
      ...o.extra,
    },
  });
  expectStatus(res, 204, "heartbeat");
  return res;
}

/** A complete, healthy health report (every group the contract names). */
export function healthyReport(simIds: string[] = []): Record<string, unknown> {
  const now = new Date().toISOString();
  return {
    app: { version: "1.2.0", ui: "open", uptime_seconds: 3600 },
    android: { version: "13", sdk: 33, manufacturer: "Samsung", model: "A14", oem_family: "samsung" },
    battery: { level: 80, charging: false },
    network: { type: "4G", connected: true, internet_reachable: true },
    permissions: {
      call_phone: true,
      read_phone_state: true,
      read_phone_numbers: true,
      receive_sms: true,
      read_sms: true,
      notifications: true,
    },
    accessibility: { enabled: true, running: true },
    background: {
      battery_exempt: true,
      service_running: true,
      foreground: true,
      service_type: "dataSync",
      wake_lock_held: false,
      time_limit_stops: 0,
    },
    polling: {
      wanted: true,
      last_tick_at: now,
      last_poll_at: now,
      consecutive_failures: 0,
      stuck_ticks: 0,
      dialling: false,
    },
    sms: { outbox_pending: 0, spool_pending: 0, spool_insert_failures: 0 },
    sims: simIds.map((sim_id, slot) => ({ slot, operator: "operator_a", sim_id, present: true })),
    recent_errors: [],
  };
}

/** Trips or resets the circuit breaker (PUT /v1/admin/circuit-breaker). */
export async function setCircuitBreaker(api: Api, adminToken: string, active: boolean): Promise<ApiResponse> {
  const res = await api.put("/v1/admin/circuit-breaker", { token: adminToken, body: { active } });
  expectStatus(res, 200, "set circuit breaker");
  return res;
}

export type CredentialName =
  "none" | "admin" | "supervisor" | "agent" | "inactive" | "apiKey" | "wrongApiKey" | "device" | "revokedDevice";

export type Credentials = Record<CredentialName, { token?: string; apiKey?: string | true }>;

/** Every credential name, for a route's statuses across all of them (`statusesFor`). */
export const EVERY_CREDENTIAL = [
  "none",
  "admin",
  "supervisor",
  "agent",
  "inactive",
  "apiKey",
  "wrongApiKey",
  "device",
  "revokedDevice",
] as const satisfies readonly CredentialName[];

/**
 * One credential of every kind the gateway meets: no credential, an admin, a supervisor,
 * an agent, an inactive agent with a live session, the API key, a wrong API key, a
 * device token and a revoked device token.
 */
export async function fleetCredentials(
  api: Api,
  adminToken: string,
  prefix: string,
  db: { query(sql: string, params?: unknown[]): Promise<unknown[]> },
): Promise<Credentials & { deviceId: string }> {
  const supervisor = await api.createAgent(adminToken, { login: `${prefix}-sup`, role: "supervisor" });
  const agent = await api.createAgent(adminToken, { login: `${prefix}-agent` });
  const inactive = await api.createAgent(adminToken, { login: `${prefix}-inactive` });
  // Every way of deactivating an agent revokes its sessions, so a live session of an inactive
  // agent cannot be made through the API: it is written directly (the token never reached a
  // gateway, so none remembers it), to hold the gateway's own refusal of an inactive caller.
  await db.query(`update fleet.agents set is_active = false where id = $1`, [inactive.agentId]);
  const device = await registerDevice(api, adminToken, `${prefix} handset`);
  const revoked = await registerDevice(api, adminToken, `${prefix} revoked handset`);
  expectStatus(
    await api.delete(`/v1/devices/${revoked.deviceId}/token`, { token: adminToken }),
    204,
    "revoke device token",
  );
  return {
    none: {},
    admin: { token: adminToken },
    supervisor: { token: supervisor.token },
    agent: { token: agent.token },
    inactive: { token: inactive.token },
    apiKey: { apiKey: true },
    wrongApiKey: { apiKey: "not-the-key" },
    device: { token: device.token },
    revokedDevice: { token: revoked.token },
    deviceId: device.deviceId,
  };
}

/** The answer every credential but those named gets on an admin-session route. */
export const ADMIN_ONLY: Record<Exclude<CredentialName, "admin">, number> = {
  none: 401,
  supervisor: 403,
  agent: 403,
  inactive: 403,
  apiKey: 403,
  wrongApiKey: 401,
  device: 403,
  revokedDevice: 401,
};

/** Calls a route with each credential and returns the statuses, to compare with expectations in one assertion. */
export async function statusesFor(
  api: Api,
  creds: Credentials,
  method: "GET" | "POST" | "PATCH" | "PUT" | "DELETE",
  path: string,
  names: CredentialName[],
  body?: unknown,
): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const name of names) out[name] = (await api.request(method, path, { ...creds[name], body })).status;
  return out;
}

/**
 * Publishes an event on the test system's Kafka topics exactly as a service's outbox relay
 * would (same headers), e.g. an AlertRaised from "another service" or a dispatch event.
 */
export async function publishTestEvent<S extends DescMessage>(
  sys: { env: Record<string, string>; topicPrefix: string },
  event: { topic: string; key: string; schema: S; message: MessageShape<S>; eventId?: string; occurredAt?: Date },
): Promise<string> {
  const log = createLogger("test-publisher", { level: "silent" });
  const bus = new KafkaBus({
    brokers: csv(sys.env.KAFKA_BROKERS),
    clientId: "test-publisher",
    prefix: sys.topicPrefix,
    log,
  });
  const id = event.eventId ?? randomUUID();
  try {
    await bus.publish([
      {
        topic: event.topic,
        key: event.key,
        value: toBinary(event.schema, event.message),
        headers: {
          "event-id": id,
          "event-type": event.schema.typeName,
          "occurred-at": (event.occurredAt ?? new Date()).toISOString(),
          "correlation-id": id,
        },
      },
    ]);
  } finally {
    await bus.close();
  }
  return id;
}

/** With DUMP_ERRORS=1 in the environment, prints the error lines the system logged (debugging aid for afterAll). */
export function dumpErrors(logs: readonly string[] | undefined): void {
  if (!process.env.DUMP_ERRORS) return;
  for (const line of logs ?? [])
    if (/"level":"error"/.test(line) && !/kafka/.test(line)) console.log(line.slice(0, 2000));
}
