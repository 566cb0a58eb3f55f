import type { ServiceImpl } from "@connectrpc/connect";
import { check, fromTs } from "@transferops/kit";
import type {
  DispatchService,
  ProveOperationRequest,
} from "@transferops/kit/gen/transferops/dispatch/v1/dispatch_service_pb";
import { checkAttachScope, refusal } from "../domain/index.ts";
import { actorOf, factsOfSummary, toOperation } from "../flows/mappers.ts";
import type { DispatchDeps } from "../flows/ports.ts";
import { findOperation } from "../flows/operations.ts";
import { attachEvidence, proveOperation, type ProofClaim } from "../flows/proof.ts";
import { isUuid, notFound } from "../flows/transitions.ts";

type Impl = Pick<ServiceImpl<typeof DispatchService>, "proveOperation" | "attachEvidence">;

const required = (field: string) => refusal("invalid_request", `${field} is required`, { field });

/** The message evidence offers as proof, as correlation reads it and a confirmation keeps it. */
function claimOf(req: ProveOperationRequest): ProofClaim {
  if (!req.messageId) throw required("message_id");
  if (!req.simId) throw required("sim_id");
  const kind = req.kind || null;
  return {
    sim_id: req.simId,
    message: {
      kind,
      amount: Number(req.amount),
      counterparty_msisdn: req.counterpartyMsisdn || null,
      device_received_at: fromTs(req.deviceReceivedAt) ?? null,
    },
    evidence: {
      message_id: req.messageId,
      operator_ref: req.operatorRef || null,
      amount: Number(req.amount),
      fee: req.fee === undefined ? null : Number(req.fee),
      balance_after: req.balanceAfter === undefined ? null : Number(req.balanceAfter),
      raw_text: req.rawText,
      received_at: fromTs(req.receivedAt) ?? null,
      kind,
      is_ambiguous: req.isAmbiguousHint,
    },
  };
}

export function proofHandlers(deps: DispatchDeps): Impl {
  return {
    async proveOperation(req) {
      const answer = await proveOperation(deps, claimOf(req));
      return {
        outcome: answer.outcome,
        operation: answer.op ? toOperation(answer.op) : undefined,
        candidateOperationIds: answer.candidates,
      };
    },

    async attachEvidence(req) {
      const actor = actorOf(req.caller);
      if (!isUuid(req.operationId)) throw notFound(req.operationId);
      if (req.scopeOnly) {
        const found = await findOperation(deps, req.operationId);
        if (!found) throw notFound(req.operationId);
        check(checkAttachScope(actor, found));
        return {};
      }
      if (!req.messageId) throw required("message_id");
      const evidence = factsOfSummary(req.messageId, req.evidence);
      const op = await attachEvidence(deps, actor, req.operationId, req.simId, evidence, {
        sender_is_operator: req.senderIsOperator,
        counterparty_msisdn: req.counterpartyMsisdn || null,
      });
      return { operation: toOperation(op) };
    },
  };
}
