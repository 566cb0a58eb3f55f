import { randomUUID } from "node:crypto";
import type { ServiceImpl } from "@connectrpc/connect";
import { type Caller, check } from "@transferops/kit";
import type { DispatchService } from "@transferops/kit/gen/transferops/dispatch/v1/dispatch_service_pb";
import {
  admitMatchingEdit,
  admitMatchingOperation,
  checkAmount,
  checkOwnOperation,
  clampLimit,
  deriveOperator,
  listAgentScope,
  refusal,
  requireKind,
  transition,
  unwrap,
} from "../domain/index.ts";
import { publishChange } from "../events/operations.ts";
import {
  findOperation,
  insertOperation,
  listOperations,
  type OperationChange,
  type OperationRecord,
} from "../store/operations.ts";
import { actorOf, roleOf, toOperation } from "../flows/mappers.ts";
import type { DispatchDeps } from "../flows/ports.ts";
import { candidatesOf, reserveBalance } from "../flows/reservation.ts";
import { cancelledBy, isUuid, lockOrNotFound, move, notFound } from "../flows/transitions.ts";

type Impl = Pick<
  ServiceImpl<typeof DispatchService>,
  "createMatchingOperation" | "listMatchingOperations" | "updateMatchingOperation" | "cancelMatchingOperation"
>;

/** The matching routes see only matching operations: any other id is unknown to them. */
function requireMatching(operation: OperationRecord): void {
  if (operation.origin !== "matching") throw notFound(operation.operation_id);
}

export function matchingHandlers(deps: DispatchDeps): Impl {
  const { db, fleet, config } = deps;

  return {
    async createMatchingOperation(req) {
      const actor = actorOf(req.caller);
      // Board only: the machine key names an arbitrary agent.
      check(requireKind(actor, ["session"], "create a matching operation"));
      const amount = Number(req.montant);
      check(checkAmount(amount));
      const destination = unwrap(deriveOperator(req.beneficiaryMsisdn));
      const simId = req.simId || null;
      const context = await fleet.dispatchContext({
        caller: req.caller as Caller | undefined,
        agentId: actor.agent_id!,
        operator: simId ? "" : destination.operator,
        opType: "deposit",
        simId,
      });
      const now = deps.now();
      const admission = unwrap(
        admitMatchingOperation(
          {
            agent: {
              agent_id: actor.agent_id!,
              role: actor.role ?? roleOf(context.agent.role),
              grant: context.grant,
              exists: context.agent.exists,
              is_active: context.agent.is_active,
            },
            beneficiary_msisdn: req.beneficiaryMsisdn,
            amount,
            sim_id: simId,
          },
          {
            circuit_breaker_active: context.breaker_active,
            candidates: await candidatesOf(db.em(), context.sims),
            now,
            staleness_ms: config.balanceStalenessMs,
          },
        ),
      );
      const sim = context.sims.find((s) => s.sim_id === admission.sim.sim_id)!;
      const operationId = randomUUID();
      const created = await db.tx(async (em) => {
        const short = await reserveBalance(
          em,
          admission.sim,
          { operator: destination.operator, op_type: "deposit", amount, now, staleness_ms: config.balanceStalenessMs },
          { inserted: false },
        );
        if (short) throw short;
        const row = (await insertOperation(em, {
          operation_id: operationId,
          // The route takes no request_id: the operation's own id makes one.
          request_id: `matching-${operationId}`,
          parent_operation_id: null,
          status: admission.status,
          origin: "matching",
          op_type: "deposit",
          agent_id: actor.agent_id!,
          operator: destination.operator,
          montant: amount,
          msisdn_dest: admission.msisdn_dest,
          dest_name: null,
          contact_id: req.contactId ?? null,
          merchant_code: null,
          partner_verified: true,
          sim_id: sim.sim_id,
          device_id: sim.device_id,
          device_label: sim.device_label,
          subscription_slot: sim.subscription_slot,
          created_at: now,
        }))!;
        await publishChange(em, row, {
          trigger: "create_matching",
          previous_status: "",
          actor_agent_id: actor.agent_id,
          at: now,
        });
        return row;
      });
      deps.published();
      return { operation: toOperation(created) };
    },

    async listMatchingOperations(req) {
      const actor = actorOf(req.caller);
      check(requireKind(actor, ["session"], "list matching operations"));
      const scope = listAgentScope(actor, null);
      if (scope instanceof Error) throw scope;
      const found = await listOperations(db.em(), {
        status: null,
        sim_id: null,
        agent_id: scope.agent_id,
        origin: "matching",
        from: null,
        to: null,
        search_text: null,
        search_digits: null,
        limit: clampLimit(req.limit),
      });
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
      const now = deps.now();
      // An edit of the amount or the number runs the create's gates (admitMatchingEdit) with
      // fleet's view of the operation's SIM, read before the lock (no call while it is held).
      const rewritesDebit = change.montant !== undefined || destination !== null;
      const seen = rewritesDebit ? await findOperation(db.em(), req.operationId) : undefined;
      const context =
        seen?.sim_id && seen.origin === "matching"
          ? await fleet.dispatchContext({
              caller: req.caller as Caller | undefined,
              agentId: actor.agent_id!,
              operator: "",
              opType: "deposit",
              simId: seen.sim_id,
            })
          : undefined;
      const after = await db.tx(async (em) => {
        const before = await lockOrNotFound(em, req.operationId);
        requireMatching(before);
        check(checkOwnOperation(actor, before));
        if (destination && destination.operator !== before.operator) {
          // The SIM holding the operation can only reach numbers of its own operator.
          throw refusal(
            "operator_mismatch",
            `Operator mismatch: ${destination.msisdn} is ${destination.operator}, but the operation declares ${before.operator}`,
            { msisdn: destination.msisdn, operator: destination.operator, declared_operator: before.operator },
          );
        }
        // 409 for an operation no longer editable comes before the gates of its new values.
        unwrap(transition(before, { type: "edit_matching" }));
        const admission = rewritesDebit
          ? unwrap(
              admitMatchingEdit(
                {
                  agent_id: actor.agent_id!,
                  role: actor.role ?? roleOf(context?.agent.role ?? ""),
                  grant: context?.grant ?? null,
                  exists: context?.agent.exists,
                  is_active: context?.agent.is_active,
                },
                before,
                { amount: change.montant ?? null, beneficiary_msisdn: destination?.msisdn ?? null },
                {
                  circuit_breaker_active: false,
                  candidates: context ? await candidatesOf(em, context.sims) : [],
                  now,
                  staleness_ms: config.balanceStalenessMs,
                },
              ),
            )
          : undefined;
        const edited = await move(em, before, { type: "edit_matching" }, change, {
          trigger: "edit_matching",
          actor_agent_id: actor.agent_id,
          at: now,
        });
        if (admission) {
          // The row now holds its new amount: checked again under the SIM's lock, as a create is.
          const short = await reserveBalance(
            em,
            admission.sim,
            {
              operator: before.operator,
              op_type: "deposit",
              amount: edited.montant,
              now,
              staleness_ms: config.balanceStalenessMs,
            },
            { inserted: true },
          );
          if (short) throw short;
        }
        return edited;
      });
      deps.published();
      return { operation: toOperation(after) };
    },

    async cancelMatchingOperation(req) {
      const actor = actorOf(req.caller);
      check(requireKind(actor, ["session"], "cancel a matching operation"));
      if (!isUuid(req.operationId)) throw notFound(req.operationId);
      const now = deps.now();
      const after = await db.tx(async (em) => {
        const before = await lockOrNotFound(em, req.operationId);
        requireMatching(before);
        check(checkOwnOperation(actor, before));
        return move(
          em,
          before,
          { type: "cancel_matching" },
          { reject_reason: cancelledBy(actor), finished_at: now },
          { trigger: "cancel_matching", actor_agent_id: actor.agent_id, failure_reason: "cancelled_by_agent", at: now },
        );
      });
      deps.published();
      return { operation: toOperation(after) };
    },
  };
}
