// Shared set-up of the evidence service's store-level tests: a fresh PostgreSQL database
// with the evidence schema, the dispatch and fleet stand-ins, and helpers that build real
// operator texts with the simulated operator's templates.

import { create } from "@bufbuild/protobuf";
import { afterAll, beforeAll, beforeEach } from "vitest";
import { createLogger, openDatabase, ts, type Database } from "@transferops/kit";
import { CallerSchema, type Caller } from "@transferops/kit/gen/transferops/common/v1/identity_pb";
import { SubmitMessagesRequestSchema } from "@transferops/kit/gen/transferops/evidence/v1/evidence_service_pb";
import { freshDatabase, type TestDatabase } from "../infra/context.ts";
import { FakeDispatch, FakeFleet } from "./evidence-fakes.ts";
import { depositConfirmation, transferReceived } from "../../services/evidence/src/domain/sms-templates.ts";
import { migrations } from "../../services/evidence/src/store/migrations/index.ts";
import type { DispatchPort, FaultHooks, FleetPort, FlowDeps } from "../../services/evidence/src/flows/ports.ts";
import { submitMessages } from "../../services/evidence/src/flows/submit.ts";

export const SIM = "sim-b-1";
export const OTHER_SIM = "sim-b-2";
export const DEVICE = "d0e1";

export const device = (deviceId = DEVICE): Caller => create(CallerSchema, { kind: "device", deviceId });
export const session = (agentId: string, role = "agent"): Caller =>
  create(CallerSchema, { kind: "session", agentId, role, isActive: true, fullName: `Agent ${agentId.slice(0, 4)}` });

export interface Harness {
  tdb: TestDatabase;
  db: Database;
  dispatch: FakeDispatch;
  fleet: FakeFleet;
  hooks: FaultHooks;
  deps: FlowDeps;
  reset(): Promise<void>;
  close(): Promise<void>;
}

export async function openHarness(): Promise<Harness> {
  const tdb = await freshDatabase();
  const db = await openDatabase({ url: tdb.url, schema: "evidence", migrations, poolMax: 20 });
  const h = {
    tdb,
    db,
    hooks: {} as FaultHooks,
    async reset() {
      await db
        .em()
        .execute(
          `truncate evidence.messages, evidence.daily_reconciliations, evidence.day_chains, evidence.wording_rules, evidence.outbox, evidence.inbox`,
        );
      h.dispatch = new FakeDispatch();
      h.fleet = new FakeFleet();
      h.fleet.sims.set(SIM, { operator: "operator_b", deviceId: DEVICE });
      h.fleet.sims.set(OTHER_SIM, { operator: "operator_b", deviceId: DEVICE });
      h.hooks = {};
      h.deps = {
        db,
        dispatch: h.dispatch as unknown as DispatchPort,
        fleet: h.fleet as unknown as FleetPort,
        log: createLogger("evidence-test", { level: "silent" }),
        published: () => undefined,
        hooks: h.hooks,
      };
    },
    async close() {
      await db.close();
      await tdb.drop();
    },
  } as Harness;
  await h.reset();
  return h;
}

/**
 * The harness of one test file: opened before its tests, emptied before each (its own
 * `beforeEach` runs after that), closed after them.
 *
 *   let h: Harness;
 *   useHarness((opened) => (h = opened));
 */
export function useHarness(set: (h: Harness) => unknown): void {
  let h: Harness | undefined;
  beforeAll(async () => {
    h = await openHarness();
    set(h);
  });
  afterAll(async () => {
    await h?.close();
  });
  beforeEach(async () => {
    await h!.reset();
  });
}

let refSeq = 0;
/** A fresh operator_b reference, as the operator prints them. */
export const newRef = () =>
  `CI260314.${String(1000 + (refSeq % 9000)).padStart(4, "0")}.B${String(10000 + refSeq++).slice(-5)}`;

/** An operator_b deposit confirmation for the given amount and customer. */
export function deposit(
  amount: number,
  o: { msisdn?: string; ref?: string; balanceAfter?: number; name?: string } = {},
): string {
  return depositConfirmation("operator_b", {
    amount,
    balanceAfter: o.balanceAfter ?? 250_000,
    ref: o.ref ?? newRef(),
    msisdn: o.msisdn ?? "690000001",
    name: o.name ?? "AMINA NGONO",
    at: new Date("2026-03-14T09:30:00Z"),
    language: "fr",
  });
}

/** An operator_b receipt of money received at `at` (a transfer in), with the balance after it. */
export function transferIn(amount: number, balanceAfter: number, at: Date): string {
  return transferReceived("operator_b", {
    amount,
    fee: 0,
    balanceAfter,
    ref: newRef(),
    msisdn: "690000123",
    name: "PAUL NJOYA",
    at,
    language: "fr",
  });
}

export interface SubmitOptions {
  simId?: string;
  deviceId?: string;
  correlate?: boolean;
  receivedAt?: Date;
  deviceReceivedAt?: Date;
  clientMessageId?: string;
  sender?: string;
}

export function submit(h: Harness, raws: string | string[], o: SubmitOptions = {}) {
  const list = Array.isArray(raws) ? raws : [raws];
  return submitMessages(
    h.deps,
    create(SubmitMessagesRequestSchema, {
      caller: device(o.deviceId),
      simId: o.simId ?? SIM,
      correlate: o.correlate ?? true,
      messages: list.map((raw, i) => ({
        sender: o.sender ?? "OrangeMoney",
        raw,
        receivedAt: ts(o.receivedAt ?? new Date(Date.now() - 1000 + i)),
        deviceReceivedAt: o.deviceReceivedAt ? ts(o.deviceReceivedAt) : undefined,
        clientMessageId: o.clientMessageId,
      })),
    }),
  );
}

export async function one(h: Harness, raw: string, o: SubmitOptions = {}) {
  const [r] = await submit(h, raw, o);
  return r;
}

export async function outboxTypes(h: Harness, topic?: string): Promise<string[]> {
  const rows = (await h.db
    .em()
    .execute(
      `select type from evidence.outbox ${topic ? "where topic = ?" : ""} order by seq`,
      topic ? [topic] : [],
    )) as { type: string }[];
  return rows.map((r) => r.type.replace(/^transferops\.[a-z]+\.v1\./, ""));
}

export async function messageRows(h: Harness): Promise<Record<string, unknown>[]> {
  return (await h.db.em().execute(`select * from evidence.messages order by stored_at, id`)) as Record<
    string,
    unknown
  >[];
}
