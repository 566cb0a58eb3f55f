import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import { fromTs, ts, check, DEVICE_IDLE_HEADER } from "@transferops/kit";
import type { DispatchService } from "@transferops/kit/gen/transferops/dispatch/v1/dispatch_service_pb";
import {
  clampLimit,
  DEVICE_LIST_DEFAULT_LIMIT,
  DEVICE_OUTCOMES,
  refusal,
  requireKind,
  type DeviceOutcome,
} from "../domain/index.ts";
import { deviceOperations, nextOperation, reportOutcome } from "../flows/device-work.ts";
import { actorOf, toDeviceOperation } from "../flows/mappers.ts";
import type { DispatchDeps } from "../flows/ports.ts";
import { isUuid, notFound } from "../flows/transitions.ts";

type Impl = Pick<
  ServiceImpl<typeof DispatchService>,
  "getNextOperation" | "watchDeviceWork" | "reportOutcome" | "listDeviceOperations"
>;

export function handsetHandlers(deps: DispatchDeps): Impl {
  return {
    async getNextOperation(req) {
      const actor = actorOf(req.caller);
      check(requireKind(actor, ["device"], "poll for operations"));
      return nextOperation(deps, actor, req.caller?.deviceTokenVersion ?? "");
    },

    async *watchDeviceWork(_req, ctx) {
      if (!deps.idle.live) {
        throw new ConnectError("This replica does not listen for work announcements yet", Code.Unavailable);
      }
      const batches = deps.idle.announcements(ctx.signal);
      yield { ready: true };
      try {
        for await (const b of batches) yield { deviceIds: b.deviceIds, forgetAll: b.forgetAll };
      } catch (err) {
        throw new ConnectError(err instanceof Error ? err.message : String(err), Code.Unavailable);
      }
    },

    async reportOutcome(req, ctx) {
      const actor = actorOf(req.caller);
      check(requireKind(actor, ["device"], "report an outcome"));
      if (!(DEVICE_OUTCOMES as readonly string[]).includes(req.outcome)) {
        throw refusal("invalid_request", `outcome must be one of ${DEVICE_OUTCOMES.join(", ")}`, { field: "outcome" });
      }
      if (!isUuid(req.operationId)) throw notFound(req.operationId);
      const { op, idle } = await reportOutcome(deps, actor, {
        operationId: req.operationId,
        outcome: req.outcome as DeviceOutcome,
        ussdResponse: req.ussdResponse,
        failureDetail: req.failureDetail,
        executedAt: fromTs(req.executedAt) ?? null,
      });
      if (idle) ctx.responseHeader.set(DEVICE_IDLE_HEADER, "1");
      return { operationId: op.operation_id, status: op.status, evidenceExpiresAt: ts(op.evidence_expires_at) };
    },

    async listDeviceOperations(req) {
      const actor = actorOf(req.caller);
      check(requireKind(actor, ["device"], "list its operations"));
      const found = await deviceOperations(deps, {
        device_id: actor.device_id!,
        since: fromTs(req.since) ?? null,
        limit: clampLimit(req.limit, DEVICE_LIST_DEFAULT_LIMIT),
      });
      return { operations: found.map(toDeviceOperation) };
    },
  };
}
