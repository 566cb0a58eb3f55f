import { randomUUID } from "node:crypto";
import { type Caller, check, type EntityManager } from "@transferops/kit";
import {
  admitMatchingEdit,
  admitMatchingOperation,
  checkOwnOperation,
  MATCHING_OP_TYPE,
  refusal,
  transition,
  unwrap,
  type Actor,
  type Operator,
} from "../domain/index.ts";
import { publishChange } from "../events/operations.ts";
import {
  findOperation,
  insertOperation,
  listOperations,
  type OperationChange,
  type OperationRecord,
} from "../store/operations.ts";
import { roleOf } from "./mappers.ts";

export type { OperationChange };
import type { DispatchContext, DispatchDeps } from "./ports.ts";
import { candidatesOf, reserveBalance } from "./reservation.ts";
import { cancelledBy, lockOrNotFound, move, notFound } from "./transitions.ts";

// Matching operations: deposits an agent creates at the board for a beneficiary (no
// request_id; the operation's own id makes one), edited and cancelled while queued.

/** The matching routes see only matching operations: any other id is unknown to them. */
function requireMatching(operation: OperationRecord): void {
  if (operation.origin !== "matching") throw notFound(operation.operation_id);
}

export interface NewMatching {
  amount: number;
  destination: { msisdn: string; operator: Operator };
  beneficiaryMsisdn: string;
  simId: string | null;
  contactId?: string;
}

/** The create's gates with fleet's context: the SIM it goes to and its status. */
async function admitCreate(deps: DispatchDeps, actor: Actor, caller: Caller | undefined, m: NewMatching, now: Date) {
  const context = await deps.fleet.dispatchContext({
    caller,
    agentId: actor.agent_id!,
    operator: m.simId ? "" : m.destination.operator,
    opType: MATCHING_OP_TYPE,
    simId: m.simId,
  });
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
        beneficiary_msisdn: m.beneficiaryMsisdn,
        amount: m.amount,
        sim_id: m.simId,
      },
      {
        circuit_breaker_active: context.breaker_active,
        candidates: await candidatesOf(deps.db.em(), context.sims, deps.config),
        now,
        staleness_ms: deps.config.balanceStalenessMs,
      },
    ),
  );
  return { admission, sim: context.sims.find((s) => s.sim_id === admission.sim.sim_id)! };
}

/** A new matching operation: the gates, then the SIM's reservation and the row in one transaction. */
export async function createMatching(
  deps: DispatchDeps,
  actor: Actor,
  caller: Caller | undefined,
  m: NewMatching,
): Promise<OperationRecord> {
  const now = deps.now();
  const { admission, sim } = await admitCreate(deps, actor, caller, m, now);
  const { operator } = m.destination;
  const operationId = randomUUID();
  const created = await deps.db.tx(async (em) => {
    const reservation = {
      operator,
      op_type: MATCHING_OP_TYPE,
      amount: m.amount,
      now,
    };
    const short = await reserveBalance(em, admission.sim, reservation, deps.config, { inserted: false });
    if (short) throw short;
    const row = (await insertOperation(em, {
      operation_id: operationId,
      // The route takes no request_id: the operation's own id makes one.
      request_id: `matching-${operationId}`,
      parent_operation_id: null,
      status: admission.status,
      origin: "matching",
      op_type: MATCHING_OP_TYPE,
      agent_id: actor.agent_id!,
      operator,
      montant: m.amount,
      msisdn_dest: admission.msisdn_dest,
      dest_name: null,
      contact_id: m.contactId ?? null,
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
  return created;
}

/** The agent's matching operations, newest first. */
export async function listMatching(deps: DispatchDeps, agentId: string | null, limit: number) {
  return listOperations(deps.db.em(), {
    status: null,
    sim_id: null,
    agent_id: agentId,
    origin: "matching",
    from: null,
    to: null,
    search_text: null,
    search_digits: null,
    limit,
  });
}

export interface MatchingEdit {
  change: OperationChange;
  destination: { msisdn: string; operator: Operator } | null;
}

/**
 * An edit of the amount or the number runs the create's gates (admitMatchingEdit) with
 * fleet's view of the operation's SIM, read before the lock (no call while it is held).
 */
async function editContext(
  deps: DispatchDeps,
  actor: Actor,
  caller: Caller | undefined,
  operationId: string,
  rewritesDebit: boolean,
): Promise<DispatchContext | undefined> {
  const seen = rewritesDebit ? await findOperation(deps.db.em(), operationId) : undefined;
  if (!seen?.sim_id || seen.origin !== "matching") return undefined;
  return deps.fleet.dispatchContext({
    caller,
    agentId: actor.agent_id!,
    operator: "",
    opType: MATCHING_OP_TYPE,
    simId: seen.sim_id,
  });
}

/** The locked operation's edit refused where it cannot be: another operator, no longer editable. */
function checkEditable(actor: Actor, before: OperationRecord, edit: MatchingEdit): void {
  requireMatching(before);
  check(checkOwnOperation(actor, before));
  const { destination } = edit;
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
}

/** The gates of the edit's new amount or number, with the SIM's candidates read in the transaction. */
async function admitEdit(
  deps: DispatchDeps,
  em: EntityManager,
  actor: Actor,
  before: OperationRecord,
  edit: MatchingEdit,
  context: DispatchContext | undefined,
  now: Date,
) {
  return unwrap(
    admitMatchingEdit(
      {
        agent_id: actor.agent_id!,
        role: actor.role ?? roleOf(context?.agent.role ?? ""),
        grant: context?.grant ?? null,
        exists: context?.agent.exists,
        is_active: context?.agent.is_active,
      },
      before,
      { amount: edit.change.montant ?? null, beneficiary_msisdn: edit.destination?.msisdn ?? null },
      {
        circuit_breaker_active: false,
        candidates: context ? await candidatesOf(em, context.sims, deps.config) : [],
        now,
        staleness_ms: deps.config.balanceStalenessMs,
      },
    ),
  );
}

/** An agent's edit of its queued matching operation, the SIM's reservation checked again. */
export async function editMatching(
  deps: DispatchDeps,
  actor: Actor,
  caller: Caller | undefined,
  operationId: string,
  edit: MatchingEdit,
): Promise<OperationRecord> {
  const now = deps.now();
  const rewritesDebit = edit.change.montant !== undefined || edit.destination !== null;
  const context = await editContext(deps, actor, caller, operationId, rewritesDebit);
  const after = await deps.db.tx(async (em) => {
    const before = await lockOrNotFound(em, operationId);
    checkEditable(actor, before, edit);
    const admission = rewritesDebit ? await admitEdit(deps, em, actor, before, edit, context, now) : undefined;
    const edited = await move(em, before, { type: "edit_matching" }, edit.change, {
      trigger: "edit_matching",
      actor_agent_id: actor.agent_id,
      at: now,
    });
    if (admission) {
      // The row now holds its new amount: checked again under the SIM's lock, as a create is.
      const reservation = {
        operator: before.operator,
        op_type: MATCHING_OP_TYPE,
        amount: edited.montant,
        now,
      };
      const short = await reserveBalance(em, admission.sim, reservation, deps.config, { inserted: true });
      if (short) throw short;
    }
    return edited;
  });
  deps.published();
  return after;
}

/** An agent's cancel of its own matching operation. */
export async function cancelMatching(deps: DispatchDeps, actor: Actor, operationId: string): Promise<OperationRecord> {
  const now = deps.now();
  const after = await deps.db.tx(async (em) => {
    const before = await lockOrNotFound(em, operationId);
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
  return after;
}
