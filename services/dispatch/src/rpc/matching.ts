import type { ServiceImpl } from "@connectrpc/connect";
import { type Caller, check } from "@transferops/kit";
import type { DispatchService } from "@transferops/kit/gen/transferops/dispatch/v1/dispatch_service_pb";
import { checkAmount, clampLimit, deriveOperator, listAgentScope, requireKind, unwrap } from "../domain/index.ts";
import type { OperationChange } from "../flows/matching.ts";
import { actorOf, toOperation } from "../flows/mappers.ts";
import { cancelMatching, createMatching, editMatching, listMatching } from "../flows/matching.ts";
import type { DispatchDeps } from "../flows/ports.ts";
import { isUuid, notFound } from "../flows/transitions.ts";

type Impl = Pick<
  ServiceImpl<typeof DispatchService>,
  "createMatchingOperation" | "listMatchingOperations" | "updateMatchingOperation" | "cancelMatchingOperation"
>;

export function matchingHandlers(deps: DispatchDeps): Impl {
  return {
    async createMatchingOperation(req) {
      const actor = actorOf(req.caller);
      // Board only: the machine key names an arbitrary agent.
      check(requireKind(actor, ["session"], "create a matching operation"));
      const amount = Number(req.montant);
      check(checkAmount(amount));
      const destination = unwrap(deriveOperator(req.beneficiaryMsisdn));
      const created = await createMatching(deps, actor, req.caller as Caller | undefined, {
        amount,
        destination,
        beneficiaryMsisdn: req.beneficiaryMsisdn,
        simId: req.simId || null,
        contactId: req.contactId,
      });
      return { operation: toOperation(created) };
    },

    async listMatchingOperations(req) {
      const actor = actorOf(req.caller);
      check(requireKind(actor, ["session"], "list matching operations"));
      const scope = listAgentScope(actor, null);
      if (scope instanceof Error) throw scope;
      const found = await listMatching(deps, scope.agent_id, clampLimit(req.limit));
      return { operations: found.map(toOperation) };
    },

    async updateMatchingOperation(req) {
      const actor = actorOf(req.caller);
      check(requireKind(actor, ["session"], "edit a matching operation"));
      if (!isUuid(req.operationId)) throw notFound(req.operationId);
      const change: OperationChange = {};
      if (req.montant !== undefined) {
        const amount = Number(req.montant);
        check(checkAmount(amount));
        change.montant = amount;
      }
      const destination = req.beneficiaryMsisdn ? unwrap(deriveOperator(req.beneficiaryMsisdn)) : null;
      if (destination) change.msisdn_dest = destination.msisdn;
      if (req.clearContactId) change.contact_id = null;
      else if (req.contactId !== undefined) change.contact_id = req.contactId;
      const edit = { change, destination };
      const after = await editMatching(deps, actor, req.caller as Caller | undefined, req.operationId, edit);
      return { operation: toOperation(after) };
    },

    async cancelMatchingOperation(req) {
      const actor = actorOf(req.caller);
      check(requireKind(actor, ["session"], "cancel a matching operation"));
      if (!isUuid(req.operationId)) throw notFound(req.operationId);
      return { operation: toOperation(await cancelMatching(deps, actor, req.operationId)) };
    },
  };
}
