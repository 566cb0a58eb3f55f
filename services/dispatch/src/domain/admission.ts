// Create operation, decided in one place: every gate in its order of precedence
// (reasons.ts lists the codes in the same order), so that a request breaking two
// rules always gets the same answer.
//
//   1. circuit breaker (423)          request-rules / reasons
//   2. amount, origin, merchant code  request-rules (422 invalid)
//   3. operator against destination   operators (422)
//   4. owning agent exists, active    admission (422 agent_unknown, 403 agent_inactive)
//   5. parent of a manual replay      admission (404 parent_not_found, also for another agent's
//                                     parent; 409 retry_contradicted; 422 retry_not_allowed)
//   6. access grant, named SIM first  grant (403)
//   7. SIM selection and balance      selection (422, 423 for a frozen handset)
//
// The named SIM is checked against the grant before selection, so an agent naming
// a SIM outside its grant hears 403 whether or not that SIM exists or is usable:
// the answer reveals nothing about SIMs it may not use.
//
// Idempotency (409 on a known request_id) comes before all of this and needs the
// store; it is the caller's.

import { fail, ok, type Result } from "./errors.ts";
import { checkGrant, checkGrantCoversOperator, filterCandidatesByGrant, type AccessGrant } from "./grant.ts";
import { initialStatus, retryFlags, type OperationStatus, type RetryFacts } from "./operation-state.ts";
import type { DomainError } from "./errors.ts";
import { refusal } from "./reasons.ts";
import { checkOperator, deriveOperator, normaliseMsisdn } from "./operators.ts";
import { checkCircuitBreaker } from "./reasons.ts";
import { checkAmount, checkMerchantCode, resolveOrigin, type CallerKind } from "./request-rules.ts";
import { selectSim, type SimCandidate } from "./selection.ts";
import { MATCHING_OP_TYPE, type Operator, type OpType, type Origin, type Role } from "./vocabulary.ts";

export interface OwningAgent {
  readonly role: Role;
  readonly grant: AccessGrant | null;
  readonly agent_id?: string;
  /** False when the API key named an agent that does not exist (absent means it does). */
  readonly exists?: boolean;
  /** False when the owning agent is inactive (absent means active). */
  readonly is_active?: boolean;
}

/** The operation a manual replay names, as the store found it. */
export interface ParentOperation {
  readonly operation_id: string;
  readonly status: OperationStatus;
  readonly has_retry: boolean;
  /** Its owner: only that agent (or a supervisor or admin) may replay it. */
  readonly agent_id?: string;
  /** What else its retry depends on (operation-state.ts `retryFlags`). */
  readonly facts?: RetryFacts;
}

export interface OperationRequest {
  readonly caller: CallerKind;
  /** The agent owning the operation: from the session, or named by the API key's `agent_id`. */
  readonly agent: OwningAgent;
  readonly operator: Operator;
  readonly op_type: OpType;
  readonly amount: number;
  readonly msisdn: string;
  readonly merchant_code?: string | null;
  readonly origin?: string | null;
  readonly sim_id?: string | null;
  /** Set on a manual replay. */
  readonly parent_operation_id?: string | null;
  /** The operation parent_operation_id names; null when it names none. */
  readonly parent?: ParentOperation | null;
}

export interface AdmissionFacts {
  readonly circuit_breaker_active: boolean;
  /** Every SIM of the declared operator, plus the named SIM whatever its operator. */
  readonly candidates: readonly SimCandidate[];
  readonly now: Date;
  readonly staleness_ms?: number;
}

export interface Admission {
  readonly sim: SimCandidate;
  readonly origin: Origin;
  /** Destination in 9-digit local form (as given when it is not a number, for account queries). */
  readonly msisdn_dest: string;
  readonly status: OperationStatus;
}

export function admitOperation(request: OperationRequest, facts: AdmissionFacts): Result<Admission> {
  const gate = checkCircuitBreaker(facts.circuit_breaker_active) ?? checkAmount(request.amount);
  if (gate !== null) return fail(gate);
  const origin = resolveOrigin(request.caller, request.origin);
  if (!origin.ok) return origin;
  const refused =
    checkMerchantCode(request.operator, request.op_type, request.merchant_code) ??
    checkOperator(request.operator, request.msisdn, request.op_type) ??
    checkOwningAgent(request.agent) ??
    checkParent(request.parent_operation_id ?? null, request.parent ?? null, request.agent);
  if (refused !== null) return fail(refused);
  const sim = selectGrantedSim(request, facts);
  if (!sim.ok) return sim;
  return ok({
    sim: sim.value,
    origin: origin.value,
    msisdn_dest: normaliseMsisdn(request.msisdn) ?? request.msisdn,
    status: initialStatus(origin.value),
  });
}

export interface MatchingRequest {
  readonly agent: OwningAgent;
  readonly beneficiary_msisdn: string;
  readonly amount: number;
  readonly sim_id?: string | null;
}

/**
 * POST /operations/matching: board only, a deposit the agent dials by hand. The
 * operator comes from the number; access, selection and balance rules are a
 * deposit's. The circuit breaker does not apply: the route lists no 423, and the
 * breaker stops machine dialling, while here a person dials and the record only
 * lets the SMS prove it.
 */
export function admitMatchingOperation(request: MatchingRequest, facts: AdmissionFacts): Result<Admission> {
  const invalidAmount = checkAmount(request.amount);
  if (invalidAmount !== null) return fail(invalidAmount);
  const destination = deriveOperator(request.beneficiary_msisdn);
  if (!destination.ok) return destination;
  const agentRefused = checkOwningAgent(request.agent);
  if (agentRefused !== null) return fail(agentRefused);
  const sim = selectGrantedSim(
    {
      agent: request.agent,
      operator: destination.value.operator,
      op_type: MATCHING_OP_TYPE,
      amount: request.amount,
      sim_id: request.sim_id ?? null,
    },
    facts,
  );
  if (!sim.ok) return sim;
  return ok({
    sim: sim.value,
    origin: "matching",
    msisdn_dest: destination.value.msisdn,
    status: initialStatus("matching"),
  });
}

/** A matching operation as an edit finds it (awaiting_manual_dial, so its amount is held on its SIM). */
export interface MatchingOperation {
  readonly sim_id: string | null;
  readonly montant: number;
  readonly msisdn_dest: string;
}

/**
 * An edit of a matching operation that changes its amount or number runs the gates of its
 * creation again on the values it would have (an edit past the grant's
 * max_amount or the SIM's balance would otherwise be proven by its SMS): the number's
 * operator, the owning agent, the grant (403 over max_amount) and the balance rules of
 * its own SIM, whose held amount is its own old amount and so is not counted against it.
 * The SIM is never swapped: a SIM since deleted refuses the edit.
 */
export function admitMatchingEdit(
  agent: OwningAgent,
  before: MatchingOperation,
  change: { amount: number | null; beneficiary_msisdn: string | null },
  facts: AdmissionFacts,
): Result<Admission> {
  if (before.sim_id === null) {
    return fail(refusal("sim_not_found", "The operation's SIM was deleted; cancel it and create another", {}));
  }
  const simId = before.sim_id;
  const candidates = facts.candidates.map((c) =>
    c.sim_id === simId ? { ...c, reserved: Math.max(0, (c.reserved ?? 0) - before.montant) } : c,
  );
  return admitMatchingOperation(
    {
      agent,
      beneficiary_msisdn: change.beneficiary_msisdn ?? before.msisdn_dest,
      amount: change.amount ?? before.montant,
      sim_id: simId,
    },
    { ...facts, candidates },
  );
}

type SelectionInput = Pick<OperationRequest, "agent" | "operator" | "op_type" | "amount" | "sim_id">;

/** Grant gates, then selection among the granted SIMs only. */
export function selectGrantedSim(request: SelectionInput, facts: AdmissionFacts): Result<SimCandidate> {
  const { role, grant } = request.agent;
  const simId = request.sim_id ?? null;
  const forbidden = checkGrant(grant, role, simId, request.op_type, request.amount);
  if (forbidden !== null) return fail(forbidden);
  const granted = filterCandidatesByGrant(facts.candidates, grant, role);
  if (simId === null) {
    const noneOfOperator = checkGrantCoversOperator(granted, role, request.operator);
    if (noneOfOperator !== null) return fail(noneOfOperator);
  }
  return selectSim(granted, {
    operator: request.operator,
    op_type: request.op_type,
    amount: request.amount,
    sim_id: simId,
    now: facts.now,
    ...(facts.staleness_ms === undefined ? {} : { staleness_ms: facts.staleness_ms }),
  });
}

/** The owning agent must exist (an API key may name anyone) and be active. */
export function checkOwningAgent(agent: OwningAgent): DomainError | null {
  const id = agent.agent_id ?? "";
  if (agent.exists === false) {
    return refusal("agent_unknown", `Agent ${id} does not exist`, { agent_id: id });
  }
  if (agent.is_active === false) {
    return refusal("agent_inactive", `Agent ${id} is inactive`, { agent_id: id });
  }
  return null;
}

/**
 * A manual replay must name an operation of the replay's owner (or any, for a supervisor or
 * an admin) whose retry is allowed (operation-state.ts `retryFlags`): nothing in flight or
 * confirmed is replayed, and an operation is replayed once. The store's unique index on
 * parent_operation_id holds the "once" when two replays race. Another agent's operation is
 * answered as one that does not exist (404, nothing of it said). One an operator's proof
 * contradicts (its money went after all) is 409 retry_contradicted: a retry would pay twice.
 */
export function checkParent(
  parentId: string | null,
  parent: ParentOperation | null,
  owner: Pick<OwningAgent, "agent_id" | "role"> = { role: "admin" },
): DomainError | null {
  if (parentId === null) return null;
  const seesAll = owner.role === "supervisor" || owner.role === "admin";
  if (parent === null || (!seesAll && parent.agent_id !== owner.agent_id)) {
    return refusal("parent_not_found", `Parent operation ${parentId} does not exist`, {
      parent_operation_id: parentId,
    });
  }
  if (parent.facts?.contradicting_message_id) {
    return refusal(
      "retry_contradicted",
      `Operation ${parentId} is ${parent.status}, but the operator's message ${parent.facts.contradicting_message_id} says its transfer went through; a retry would pay twice`,
      {
        parent_operation_id: parentId,
        operation_status: parent.status,
        contradicting_message_id: parent.facts.contradicting_message_id,
      },
    );
  }
  if (retryFlags(parent.status, parent.has_retry, parent.facts).retry_allowed) return null;
  const detail = parent.has_retry
    ? `Operation ${parentId} already has a retry`
    : `Operation ${parentId} is ${parent.status}; a retry is not allowed`;
  return refusal("retry_not_allowed", detail, {
    parent_operation_id: parentId,
    operation_status: parent.status,
    has_retry: parent.has_retry,
  });
}
