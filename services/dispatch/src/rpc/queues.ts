import type { ServiceImpl } from "@connectrpc/connect";
import type { DayWindow } from "@transferops/kit/gen/transferops/common/v1/pagination_pb";
import type { DispatchService } from "@transferops/kit/gen/transferops/dispatch/v1/dispatch_service_pb";
import {
  checkNote,
  checkQueueScope,
  clampLimit,
  isWithinLateWindow,
  parseDayWindow,
  queueScope,
  refusal,
  requireAdmin,
  requireKind,
  seesFleet,
  type Actor,
  unwrap,
} from "../domain/index.ts";
import { ambiguousCounts } from "../store/proofs.ts";
import { listSettledOnWord, listUnproven } from "../store/queues.ts";
import { actorOf, toOperation, toSettledOnWord, toUnproven } from "../flows/mappers.ts";
import { check } from "@transferops/kit";
import type { DispatchDeps } from "../flows/ports.ts";
import { isUuid, lockOrNotFound, move, notFound } from "../flows/transitions.ts";
import { watchRetryChain } from "../flows/proof.ts";

type Impl = Pick<
  ServiceImpl<typeof DispatchService>,
  "listUnproven" | "settleOperation" | "listSettledOnWord" | "arbitrateOperation"
>;

export function queueHandlers(deps: DispatchDeps): Impl {
  const { db, fleet, config } = deps;

  /** SIMs the caller's grant assigns it (from fleet); none are needed for the fleet-wide callers. */
  async function grantedSims(actor: Actor): Promise<string[]> {
    if (seesFleet(actor) || !actor.agent_id) return [];
    return (await fleet.agentScope(actor.agent_id)).allowed_sim_ids;
  }

  function windowOf(window: DayWindow | undefined, now: Date) {
    return unwrap(
      parseDayWindow(
        { days: window?.days ?? 0, from: window?.from ?? "", to: window?.to ?? "", all: window?.all ?? false },
        now,
      ),
    );
  }

  return {
    async listUnproven(req) {
      const actor = actorOf(req.caller);
      check(requireKind(actor, ["session", "api_key"], "read the arbitration queue"));
      const now = deps.now();
      const range = windowOf(req.window, now);
      const scope = queueScope(actor, await grantedSims(actor));
      const em = db.em();
      const found = await listUnproven(em, { scope, ...range, limit: clampLimit(req.limit) });
      const counts = await ambiguousCounts(
        em,
        found.map((o) => o.operation_id),
      );
      return {
        operations: found.map((o) =>
          toUnproven(o, counts.get(o.operation_id) ?? 0, isWithinLateWindow(o.finished_at, now, config.lateEvidenceS)),
        ),
      };
    },

    async listSettledOnWord(req) {
      const actor = actorOf(req.caller);
      check(requireKind(actor, ["session", "api_key"], "read the settled-on-word queue"));
      const range = windowOf(req.window, deps.now());
      const scope = queueScope(actor, await grantedSims(actor));
      const found = await listSettledOnWord(db.em(), { scope, ...range, limit: clampLimit(req.limit) });
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
      const granted = await grantedSims(actor);
      const now = deps.now();
      const arrived = req.outcome === "arrived";
      const after = await db.tx(async (em) => {
        const before = await lockOrNotFound(em, req.operationId);
        check(checkQueueScope(actor, before, granted));
        const op = await move(
          em,
          before,
          { type: "settle", outcome: req.outcome as "arrived" | "did_not_arrive" },
          {
            decision: req.outcome,
            decision_note: req.note,
            decided_by: actor.agent_id,
            decided_by_name: actor.full_name,
            decided_at: now,
            ...(arrived ? { confirmed_by: "settle" as const } : { failure_reason: "did_not_arrive" }),
          },
          {
            trigger: "settle",
            actor_agent_id: actor.agent_id,
            note: req.note,
            decision: req.outcome,
            failure_reason: "did_not_arrive",
            at: now,
          },
        );
        if (arrived)
          await watchRetryChain(em, op, { decided_by_name: actor.full_name, decision: "settled arrived" }, now);
        return op;
      });
      deps.published();
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
      const now = deps.now();
      const confirmed = req.decision === "confirmed";
      const after = await db.tx(async (em) => {
        const before = await lockOrNotFound(em, req.operationId);
        const op = await move(
          em,
          before,
          { type: "arbitrate", decision: req.decision as "confirmed" | "failed" },
          {
            decision: req.decision,
            decision_note: req.note,
            decided_by: actor.agent_id,
            decided_by_name: actor.full_name,
            decided_at: now,
            ...(confirmed ? { confirmed_by: "arbitrate" as const } : { failure_reason: "arbitrated_failed" }),
          },
          {
            trigger: "arbitrate",
            actor_agent_id: actor.agent_id,
            note: req.note,
            decision: req.decision,
            failure_reason: "arbitrated_failed",
            at: now,
          },
        );
        if (confirmed)
          await watchRetryChain(em, op, { decided_by_name: actor.full_name, decision: "arbitrated confirmed" }, now);
        return op;
      });
      deps.published();
      return { operation: toOperation(after) };
    },
  };
}
