import type { ServiceImpl } from "@connectrpc/connect";
import { check, DEFAULT_OP_TYPE } from "@transferops/kit";
import type {
  CreateOperationRequest,
  DispatchService,
} from "@transferops/kit/gen/transferops/dispatch/v1/dispatch_service_pb";
import {
  checkOwnOperation,
  checkRequestIdNamespace,
  isOperator,
  isOpType,
  listAgentScope,
  parseOperationListQuery,
  refusal,
  requireKind,
  unwrap,
  type Actor,
} from "../domain/index.ts";
import { OperationCreation } from "../flows/create-operation.ts";
import { actorOf, toOperation } from "../flows/mappers.ts";
import type { DispatchDeps } from "../flows/ports.ts";
import { cancelOperation, findOperation, listOperations } from "../flows/operations.ts";
import { isUuid, notFound } from "../flows/transitions.ts";

type Impl = Pick<
  ServiceImpl<typeof DispatchService>,
  "createOperation" | "listOperations" | "getOperation" | "cancelOperation"
>;

const invalid = (field: string, message: string) => refusal("invalid_request", message, { field });

/** The create request's own fields, checked before anything is read; returns the operation's owner. */
function ownerOfCreate(req: CreateOperationRequest, actor: Actor): string {
  check(requireKind(actor, ["api_key", "intake", "session"], "create an operation"));
  const opType = req.typeOp || DEFAULT_OP_TYPE;
  if (!req.requestId.trim()) throw invalid("request_id", "request_id is required");
  check(checkRequestIdNamespace(actor.kind, req.requestId));
  if (!req.clientNom.trim()) throw invalid("client.nom", "client.nom is required");
  if (!isOpType(opType))
    throw invalid("type_op", `type_op must be one of deposit, withdrawal, balance, float_deposit, mini_statement`);
  if (!isOperator(req.operator)) throw invalid("operator", "operator must be operator_a or operator_b");
  const agentId = actor.kind === "session" ? actor.agent_id! : req.agentId;
  if (!agentId) throw invalid("agent_id", "agent_id is required with the API key");
  if (!isUuid(agentId)) throw invalid("agent_id", "agent_id must be a UUID");
  if (req.parentOperationId !== undefined && !isUuid(req.parentOperationId)) {
    throw invalid("parent_operation_id", "parent_operation_id must be a UUID");
  }
  return agentId;
}

export function operationHandlers(deps: DispatchDeps): Impl {
  const creation = new OperationCreation(deps);

  return {
    async createOperation(req) {
      const actor = actorOf(req.caller);
      const { record, created } = await creation.create(req, actor, ownerOfCreate(req, actor));
      return { operation: toOperation(record), created };
    },

    async listOperations(req) {
      const actor = actorOf(req.caller);
      check(requireKind(actor, ["session", "api_key"], "list operations"));
      const filters = unwrap(
        parseOperationListQuery({
          status: req.status,
          sim_id: req.simId,
          date: req.date,
          date_from: req.dateFrom,
          date_to: req.dateTo,
          search: req.search,
          limit: req.limit,
        }),
      );
      const scope = listAgentScope(actor, req.agentId || null);
      if (scope instanceof Error) throw scope;
      const found = await listOperations(deps, { ...filters, agent_id: scope.agent_id });
      return { operations: found.map(toOperation) };
    },

    async getOperation(req) {
      const actor = actorOf(req.caller);
      check(requireKind(actor, ["session", "api_key"], "read an operation"));
      const found = isUuid(req.operationId) ? await findOperation(deps, req.operationId) : undefined;
      if (!found) throw notFound(req.operationId);
      check(checkOwnOperation(actor, found));
      return { operation: toOperation(found) };
    },

    async cancelOperation(req) {
      const actor = actorOf(req.caller);
      check(requireKind(actor, ["session"], "cancel an operation"));
      if (!isUuid(req.operationId)) throw notFound(req.operationId);
      const after = await cancelOperation(deps, actor, req.operationId);
      return { operation: toOperation(after) };
    },
  };
}
