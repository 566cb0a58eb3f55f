// The evidence service through a real gRPC server on port 0: handlers, proto mapping,
// refusals as Connect errors carrying the contract's code.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, type Client } from "@connectrpc/connect";
import { createLogger, MemoryBus, serviceClient, ts } from "@transferops/kit";
import { ErrorDetailSchema } from "@transferops/kit/gen/transferops/common/v1/errors_pb";
import { EvidenceService } from "@transferops/kit/gen/transferops/evidence/v1/evidence_service_pb";
import { startEvidence, type RunningEvidence } from "../app.ts";
import { loadEvidenceConfig } from "../config.ts";
import { depositConfirmation } from "../domain/sms-templates.ts";
import type { DispatchPort, FleetPort } from "../flows/ports.ts";
import { freshDatabase, type TestDatabase } from "../../../../test/infra/context.ts";
import { FakeDispatch, FakeFleet } from "../../../../test/support/evidence-fakes.ts";
import { device, session, SIM, DEVICE } from "../../../../test/support/evidence-harness.ts";
import { connectErrorOf } from "../../../../test/support/refusal.ts";

let tdb: TestDatabase;
let service: RunningEvidence;
let client: Client<typeof EvidenceService>;
const dispatch = new FakeDispatch();
const fleet = new FakeFleet();
const bus = new MemoryBus();

beforeAll(async () => {
  tdb = await freshDatabase();
  fleet.sims.set(SIM, { operator: "operator_b", deviceId: DEVICE });
  service = await startEvidence({
    config: loadEvidenceConfig({ DATABASE_URL: tdb.url, NODE_ENV: "test", EVIDENCE_REDRIVE_INTERVAL_MS: "60000" }),
    port: 0,
    bus,
    log: createLogger("evidence-rpc-test", { level: "silent" }),
    dispatch: dispatch as unknown as DispatchPort,
    fleet: fleet as unknown as FleetPort,
  });
  client = serviceClient(EvidenceService, service.url);
});
afterAll(async () => {
  await service?.stop();
  await bus.close();
  await tdb?.drop();
});

async function connectError(p: Promise<unknown>): Promise<{ code: Code; reason: string }> {
  const err = await connectErrorOf(p);
  const detail = err.findDetails(ErrorDetailSchema)[0];
  const reason = detail?.context?.reason;
  return { code: err.code, reason: typeof reason === "string" ? reason : (detail?.code ?? "") };
}

describe("ParseMessage", () => {
  it("returns every parsed field and the kind", async () => {
    const text = depositConfirmation("operator_b", {
      amount: 16_000,
      balanceAfter: 100_000,
      ref: "CI190515.2032.B37161",
      msisdn: "699992396",
      name: "ABDOU AZIZ",
      at: new Date("2026-05-15T19:32:00Z"),
      language: "fr",
    });
    const res = await client.parseMessage({ operator: "operator_b", text });
    expect(res).toMatchObject({
      kind: "DEP",
      amount: 16_000n,
      fee: 0n,
      balanceAfter: 100_000n,
      operatorRef: "CI190515.2032.B37161",
      counterpartyMsisdn: "699992396",
      counterpartyName: "ABDOU AZIZ",
      direction: "out",
      language: "fr",
      canConfirm: true,
      canConfirmBalance: false,
      isMovement: false,
    });
    expect(res.rule).toMatch(/^b\./);
  });

  it("answers kind unset for a text no rule recognises", async () => {
    const res = await client.parseMessage({ operator: "operator_a", text: "bonjour" });
    expect(res.kind).toBeUndefined();
    expect(res.amount).toBeUndefined();
    expect(res.canConfirm).toBe(false);
  });

  it("refuses an unknown operator as invalid_request", async () => {
    expect(await connectError(client.parseMessage({ operator: "operator_z", text: "x" }))).toEqual({
      code: Code.InvalidArgument,
      reason: "invalid_request",
    });
  });
});

describe("SubmitMessages", () => {
  const message = (raw: string) => ({ sender: "OrangeMoney", raw, receivedAt: ts(new Date()) });

  it("stores and correlates, and refuses a SIM of another device with PermissionDenied", async () => {
    dispatch.add({ operationId: "55555555-5555-4555-8555-555555555555", simId: SIM, montant: 777 });
    const text = depositConfirmation("operator_b", {
      amount: 777,
      balanceAfter: 1000,
      ref: "CI260101.0101.A00001",
      msisdn: "690000001",
      name: "JEAN BOSCO",
      at: new Date(),
      language: "fr",
    });
    const res = await client.submitMessages({
      caller: device(),
      simId: SIM,
      correlate: true,
      messages: [message(text)],
    });
    expect(res.results[0]).toMatchObject({
      matched: true,
      outcome: "confirmed",
      operationId: "55555555-5555-4555-8555-555555555555",
    });
    expect(res.results[0].operation?.montant).toBe(777n);
    expect(
      await connectError(
        client.submitMessages({
          caller: device("someone-else"),
          simId: SIM,
          correlate: true,
          messages: [message("x")],
        }),
      ),
    ).toEqual({
      code: Code.PermissionDenied,
      reason: "sim_not_assigned_to_device",
    });
    expect(
      await connectError(
        client.submitMessages({ caller: session("a"), simId: SIM, correlate: true, messages: [message("x")] }),
      ),
    ).toEqual({
      code: Code.PermissionDenied,
      reason: "device_required",
    });
  });
});

describe("ResetEvidence", () => {
  it("is refused to anyone but an admin, and deletes every message and reconciliation", async () => {
    expect((await connectError(client.resetEvidence({ caller: session("a", "supervisor") }))).reason).toBe(
      "admin_required",
    );
    const res = await client.resetEvidence({ caller: session("a", "admin") });
    expect(res.deleted).toEqual({ evidences: 1n, daily_reconciliations: 1n });
    const again = await client.resetEvidence({ caller: session("a", "admin") });
    expect(again.deleted).toEqual({ evidences: 0n, daily_reconciliations: 0n });
  });
});
