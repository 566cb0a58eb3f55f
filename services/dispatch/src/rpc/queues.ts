import type { ServiceImpl } from "@connectrpc/connect";
import type { DayWindow } from "@transferops/kit/gen/transferops/common/v1/pagination_pb";
import type { DispatchService } from "@transferops/kit/gen/transferops/dispatch/v1/dispatch_service_pb";
import {
  checkNote,
  clampLimit,
  isWithinLateWindow,
  parseDayWindow,
  queueScope,
  refusal,
  requireAdmin,
  requireKind,
  unwrap,
} from "../domain/index.ts";
import { actorOf, toOperation, toSettledOnWord, toUnproven } from "../flows/mappers.ts";
import { check } from "@transferops/kit";
import type { DispatchDeps } from "../flows/ports.ts";
import { arbitrateOperation, grantedSims, listSettledOnWord, listUnproven, settleOperation } from "../flows/queues.ts";
import { isUuid, notFound } from "../flows/transitions.ts";

type Impl = Pick<
  ServiceImpl<typeof DispatchService>,
  "listUnproven" | "settleOperation" | "listSettledOnWord" | "arbitrateOperation"
>;

function windowOf(window: DayWindow | undefined, now: Date) {
  return unwrap(
    parseDayWindow(
      { days: window?.days ?? 0, from: window?.from ?? "", to: window?.to ?? "", all: window?.all ?? false },
      now,
    ),
  );
}

export function queueHandlers(deps: DispatchDeps): Impl {
  const { config } = deps;
  return {
    async listUnproven(req) {
      const actor = actorOf(req.caller);
      check(requireKind(actor, ["session", "api_key"], "read the arbitration queue"));
      const now = deps.now();
      const range = windowOf(req.window, now);
      const scope = queueScope(actor, await grantedSims(deps, actor));
      const found = await listUnproven(deps, { scope, ...range, limit: clampLimit(req.limit) });
      return {
        operations: found.map((o) => toUnproven(o, isWithinLateWindow(o.finished_at, now, config.lateEvidenceS))),
      };
    },

    async listSettledOnWord(req) {
      const actor = actorOf(req.caller);
      check(requireKind(actor, ["session", "api_key"], "read the settled-on-word queue"));
      const range = windowOf(req.window, deps.now());
      const scope = queueScope(actor, await grantedSims(deps, actor));
      const found = await listSettledOnWord(deps, { scope, ...range, limit: clampLimit(req.limit) });
      return { operations: found.map(toSettledOnWord) };
    },

    async settleOperation(req) {
      const actor = actorOf(req.caller);
      check(requireKind(actor, ["session"], "settle an operation"));
      if (req.outcome !== "arrived" && req.outcome !== "did_not_arrive") {
        throw refusal("invalid_request", "outcome must be arrived or did_not_arrive", { field: "outcome" });
      }
      check(checkNote(req.note));
      if (!isUuid(req.operationId)) throw notFound(req.operationId);
      const after = await settleOperation(deps, actor, req.operationId, req.outcome, req.note);
      return { operation: toOperation(after) };
    },

    async arbitrateOperation(req) {
      const actor = actorOf(req.caller);
      check(requireAdmin(actor, "arbitrate an operation"));
      if (req.decision !== "confirmed" && req.decision !== "failed") {
        throw refusal("invalid_request", "decision must be confirmed or failed", { field: "decision" });
      }
      check(checkNote(req.note));
      if (!isUuid(req.operationId)) throw notFound(req.operationId);
      const after = await arbitrateOperation(deps, actor, req.operationId, req.decision, req.note);
      return { operation: toOperation(after) };
    },
  };
}
