import { z } from "zod";
import { DEVICE_OUTCOMES } from "@transferops/dispatch/operation-state";
import { DeviceDispatchSchema, DeviceOperationSchema } from "@transferops/kit/gen/transferops/dispatch/v1/dispatch_pb";
import { ReportOutcomeResponseSchema } from "@transferops/kit/gen/transferops/dispatch/v1/dispatch_service_pb";
import { toContractJson } from "../../http/json.ts";
import { instant, noContent, ok, pageLimit, route, uuid, type Route } from "../../http/route.ts";
import { withReasons } from "../../http/reasons.ts";
import { DISPATCH } from "../../http/service-reasons.ts";
import { contractSchema } from "../../http/contract-schema.ts";

const outcome = z.enum(DEVICE_OUTCOMES);

/**
 * The handset's work routes (device token): poll, outcome report, claimed operations.
 * The poll's 200 payload is the only response that carries a SIM PIN (ussd_steps,
 * ussd_string); nothing here logs a body.
 */
export const handsetDispatchRoutes: Route[] = [
  route({
    operationId: "getNextOperation",
    method: "get",
    path: "/v1/device/next",
    tag: "Handset",
    summary:
      "Poll for the next operation: claims the device's oldest queued one (running); 204 when idle or in cooldown",
    auth: ["device"],
    responses: withReasons(
      {
        200: {
          description: "Operation payload (ussd_steps with the PIN)",
          schema: contractSchema(DeviceDispatchSchema),
        },
        204: "No queued operation, or inside the cooldown",
        401: "Bad credentials",
        409: "The device already has a running operation",
        429: "Too many requests",
        500: "USSD steps could not be built",
      },
      DISPATCH,
      ["caller_not_allowed", "device_busy"],
    ),
    // An idle handset's poll is answered from this replica's memory (its token and dispatch's
    // "idle"); a claim may use a remembered authentication too, because fleet reveals the PIN
    // only while the token the caller names (its version) stands, read in the reveal's
    // transaction (docs/decisions/fleet.md, "PIN reveal").
    async handle({ caller, services, res, idlePolls }) {
      // Most polls: a handset dispatch said was idle, and announced no work for since.
      const reply = await idlePolls.poll(caller!.deviceId, () => services.dispatch.getNextOperation({ caller }));
      if (!reply?.dispatch) return noContent();
      res.setHeader("Cache-Control", "no-store");
      return ok(toContractJson(DeviceDispatchSchema, reply.dispatch));
    },
  }),
  route({
    operationId: "reportOutcome",
    method: "post",
    path: "/v1/device/outcome",
    tag: "Handset",
    summary: "Report the USSD outcome of the running operation; idempotent",
    description:
      "The device's own operations only (404 otherwise). failure_reason is failure_detail when sent, else ussd_response for name_mismatch, else the outcome value. Replay (the contract leaves it open; docs/decisions/dispatch.md): the same outcome again is 200 with the current status; a different outcome is 409 outcome_conflict; a first report on an operation that left running without the device (proved by an SMS first, cancelled mid-dial) is 200, recorded, status unchanged; on a queued one 409 operation_not_running.",
    auth: ["device"],
    requestExample: {
      operation_id: "3f0c2a4e-8b1d-4c6f-9e2a-5d7b8c9d0e1f",
      outcome: "ussd_failed",
      ussd_response: "Solde insuffisant",
      executed_at: "2026-11-22T09:30:00Z",
      failure_detail: null,
    },
    body: z.object({
      operation_id: uuid(),
      outcome,
      ussd_response: z.string().max(5000).nullable().optional(),
      executed_at: instant(),
      failure_detail: z.string().max(1000).nullable().optional(),
    }),
    responses: withReasons(
      {
        200: {
          description: "operation_id, status, evidence_expires_at",
          schema: contractSchema(ReportOutcomeResponseSchema),
        },
        401: "Bad credentials",
        404: "Not an operation of this device",
        409: "Not running, or a different outcome was already reported",
        422: "Invalid body",
      },
      DISPATCH,
      ["caller_not_allowed", "operation_not_found", "operation_not_running", "outcome_conflict", "invalid_request"],
    ),
    // A report that leaves the device nothing to do makes its next poll a 204 from memory.
    async handle({ caller, body, services, idlePolls }) {
      const reply = await idlePolls.outcome(caller!.deviceId, (onHeader) =>
        services.dispatch.reportOutcome(
          {
            caller,
            operationId: body.operation_id,
            outcome: body.outcome,
            ussdResponse: body.ussd_response ?? undefined,
            executedAt: { seconds: BigInt(Math.floor(Date.parse(body.executed_at) / 1000)), nanos: 0 },
            failureDetail: body.failure_detail ?? undefined,
          },
          { onHeader },
        ),
      );
      return ok(toContractJson(ReportOutcomeResponseSchema, reply));
    },
  }),
  route({
    operationId: "listDeviceOperations",
    method: "get",
    path: "/v1/device/operations",
    tag: "Handset",
    summary: "Operations the device claimed, most recently changed first",
    auth: ["device"],
    query: z.object({ since: instant().optional(), limit: pageLimit().optional() }),
    responses: withReasons(
      {
        200: { description: "Array of device operation rows", schema: z.array(contractSchema(DeviceOperationSchema)) },
        401: "Bad credentials",
        422: "Malformed since or limit",
      },
      DISPATCH,
      ["caller_not_allowed", "invalid_request"],
    ),
    async handle({ caller, query, services }) {
      const since = query.since ? Date.parse(query.since) : undefined;
      const reply = await services.dispatch.listDeviceOperations({
        caller,
        since:
          since === undefined
            ? undefined
            : { seconds: BigInt(Math.floor(since / 1000)), nanos: (since % 1000) * 1_000_000 },
        limit: query.limit ?? 0,
      });
      return ok(reply.operations.map((o) => toContractJson(DeviceOperationSchema, o)));
    },
  }),
];
