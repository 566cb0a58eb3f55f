// SIM selection and the balance gates of create operation.
//
// Automatic selection (no `sim_id`), gates in this order, each answering with the
// contract's 422 text when nothing passes it:
//   1. SIMs of the declared operator that are `active`    else no_active_sim
//   2. ... that sit in a handset (device_id set)           else no_assigned_sim
//   3. ... whose handset is `active` (not frozen)          else no_active_sim
//      (the contract's meaning of that text is "no active SIM on an active device")
//   4. balance checks stop here: they are how a SIM gets measured.
//   5. ... with a measured balance                         else no_measured_balance
//   6. ... measured within the staleness window (24 h)     else stale_balance, naming the
//      SIM with the most recent reading (the closest to passing)
//   7. debiting types (deposit, float_deposit) prefer the SIMs whose available balance
//      (measured balance less the debits already queued or running on it) covers the
//      amount; when none does, insufficient_balance names the SIM with the largest
//      available balance, so "available" is the most the fleet could send.
// Ties go to the fewest in-flight operations, then the SIM idle longest (never used
// first, then oldest last_finished_at), then the smallest sim_id so that the same
// input always selects the same SIM.
//
// Named SIM (`sim_id` given): the caller asked for that SIM, so it is never swapped
// for another. It must exist among the candidates, belong to the declared operator,
// be active, sit in a handset, and that handset must be active; then the same balance
// rules apply to it alone (measured, fresh, covering). Its load is not considered:
// the operation queues behind the SIM's current work. A handset that is not active
// answers 422 (device_frozen): on create, 423 is the breaker alone; in
// automatic selection a frozen handset only makes its SIMs ineligible.
//
// The caller passes every SIM of the operator (plus the named SIM, whatever its
// operator), already narrowed to the agent's grant by `filterCandidatesByGrant`.

import type { DomainError } from "./errors.ts";
import { fail, ok, type Result } from "./errors.ts";
import { refusal } from "./reasons.ts";
import { isDebiting, type Operator, type OpType, type SimStatus } from "./vocabulary.ts";
import { formatLocalIso } from "./windows.ts";

export const BALANCE_STALENESS_MS = 24 * 60 * 60 * 1000;

export interface SimCandidate {
  readonly sim_id: string;
  readonly operator: Operator;
  readonly status: SimStatus;
  readonly device_id: string | null;
  readonly device_status: string | null;
  /** Last measured balance in FCFA; null means unknown, never zero. */
  readonly balance_mirror: number | null;
  readonly balance_updated_at: Date | null;
  /** Operations of this SIM in queued or running. */
  readonly in_flight: number;
  /**
   * FCFA already committed on this SIM: the amounts of its debiting operations
   * (deposit, float_deposit) not yet proven or ended (HOLDING_STATUSES: queued, running,
   * awaiting_evidence, awaiting_manual_dial). The measured balance minus this is what a
   * new debit may use; absent is 0.
   */
  readonly reserved?: number;
  readonly last_finished_at: Date | null;
}

export interface SelectionRequest {
  readonly operator: Operator;
  readonly op_type: OpType;
  /** FCFA; the placeholder 1 for account queries. */
  readonly amount: number;
  readonly sim_id?: string | null;
  readonly now: Date;
  readonly staleness_ms?: number;
}

export function selectSim(candidates: readonly SimCandidate[], request: SelectionRequest): Result<SimCandidate> {
  return request.sim_id == null
    ? selectAutomatically(candidates, request)
    : checkNamedSim(candidates, request.sim_id, request);
}

// ---------------------------------------------------------------------------
// Automatic selection

function selectAutomatically(candidates: readonly SimCandidate[], request: SelectionRequest): Result<SimCandidate> {
  const { operator } = request;
  const active = candidates.filter((sim) => sim.operator === operator && sim.status === "active");
  if (active.length === 0) return fail(noActiveSim(operator));
  const assigned = active.filter((sim) => sim.device_id !== null);
  if (assigned.length === 0) {
    return fail(refusal("no_assigned_sim", `No active ${operator} SIM is assigned to a device`, { operator }));
  }
  const eligible = assigned.filter(isOnActiveDevice);
  if (eligible.length === 0) {
    // Said in the context: a transaction's launch answers this case 423 (intake's rule).
    const frozen = [...new Set(assigned.filter((sim) => sim.device_status === "frozen").map((sim) => sim.device_id))];
    return fail(noActiveSim(operator, frozen.length ? { frozen_device_ids: frozen } : {}));
  }
  if (request.op_type === "balance") return ok(best(eligible));

  const measured = eligible.filter(isMeasured);
  if (measured.length === 0) {
    return fail(refusal("no_measured_balance", `No ${operator} SIM has a measured balance`, { operator }));
  }
  const fresh = measured.filter((sim) => isFresh(sim, request));
  if (fresh.length === 0) return fail(staleBalance(mostRecentlyMeasured(measured)));
  if (!isDebiting(request.op_type)) return ok(best(fresh));

  const covering = fresh.filter((sim) => covers(sim, request.amount));
  if (covering.length > 0) return ok(best(covering));
  return fail(insufficientBalance(richest(fresh), request.amount));
}

function noActiveSim(operator: Operator, context: Record<string, unknown> = {}): DomainError {
  return refusal("no_active_sim", `No active ${operator} SIM available`, { operator, ...context });
}

// ---------------------------------------------------------------------------
// Named SIM

function checkNamedSim(
  candidates: readonly SimCandidate[],
  simId: string,
  request: SelectionRequest,
): Result<SimCandidate> {
  const sim = candidates.find((candidate) => candidate.sim_id === simId);
  if (sim === undefined) return fail(refusal("sim_not_found", `SIM ${simId} does not exist`, { sim_id: simId }));
  const refused = checkNamedSimState(sim, request.operator) ?? checkBalance(sim, request);
  return refused === null ? ok(sim) : fail(refused);
}

function checkNamedSimState(sim: SimCandidate, operator: Operator): DomainError | null {
  const id = sim.sim_id;
  if (sim.operator !== operator) {
    return refusal(
      "sim_operator_mismatch",
      `SIM ${id} belongs to ${sim.operator}, but the operation declares ${operator}`,
      {
        sim_id: id,
        operator: sim.operator,
        declared_operator: operator,
      },
    );
  }
  if (sim.status === "frozen") return refusal("sim_frozen", `SIM ${id} is frozen`, { sim_id: id });
  if (sim.status === "retired") return refusal("sim_retired", `SIM ${id} is retired`, { sim_id: id });
  if (sim.device_id === null) {
    return refusal("sim_not_assigned", `SIM ${id} is not assigned to a device`, { sim_id: id });
  }
  if (!isOnActiveDevice(sim)) {
    const deviceStatus = sim.device_status ?? "unknown";
    return refusal("device_frozen", `Device ${sim.device_id} holding SIM ${id} is ${deviceStatus}`, {
      sim_id: id,
      device_id: sim.device_id,
      device_status: deviceStatus,
    });
  }
  return null;
}

/** The balance rules for one SIM: measured, fresh, and covering when the operation debits it. */
export function checkBalance(sim: SimCandidate, request: SelectionRequest): DomainError | null {
  if (request.op_type === "balance") return null;
  if (!isMeasured(sim)) {
    return refusal("sim_unmeasured", `SIM ${sim.sim_id} has no measured balance`, { sim_id: sim.sim_id });
  }
  if (!isFresh(sim, request)) return staleBalance(sim);
  if (isDebiting(request.op_type) && !covers(sim, request.amount)) return insufficientBalance(sim, request.amount);
  return null;
}

// ---------------------------------------------------------------------------
// Predicates, ranking and refusal texts

export type MeasuredSim = SimCandidate & { readonly balance_mirror: number; readonly balance_updated_at: Date };

function isMeasured(sim: SimCandidate): sim is MeasuredSim {
  return sim.balance_mirror !== null && sim.balance_updated_at !== null;
}

function isOnActiveDevice(sim: SimCandidate): boolean {
  return sim.device_id !== null && sim.device_status === "active";
}

/** A reading exactly `staleness_ms` old is still fresh; only older ones are refused. */
function isFresh(sim: MeasuredSim, request: SelectionRequest): boolean {
  const ageMs = request.now.getTime() - sim.balance_updated_at.getTime();
  return ageMs <= (request.staleness_ms ?? BALANCE_STALENESS_MS);
}

/** The measured balance less what debits not yet proven or ended already committed. */
export function availableOf(sim: MeasuredSim): number {
  return sim.balance_mirror - (sim.reserved ?? 0);
}

function covers(sim: MeasuredSim, amount: number): boolean {
  return availableOf(sim) >= amount;
}

/** Orders SIMs by preference: fewest in flight, idle longest (never used first), then sim_id. */
export function compareSims(a: SimCandidate, b: SimCandidate): number {
  if (a.in_flight !== b.in_flight) return a.in_flight - b.in_flight;
  const idleA = a.last_finished_at?.getTime() ?? Number.NEGATIVE_INFINITY;
  const idleB = b.last_finished_at?.getTime() ?? Number.NEGATIVE_INFINITY;
  if (idleA !== idleB) return idleA < idleB ? -1 : 1;
  // Plain code-unit order, not localeCompare: the choice must not depend on the host's locale.
  if (a.sim_id === b.sim_id) return 0;
  return a.sim_id < b.sim_id ? -1 : 1;
}

function best<T extends SimCandidate>(sims: readonly T[]): T {
  return [...sims].sort(compareSims)[0] as T;
}

function mostRecentlyMeasured(sims: readonly MeasuredSim[]): MeasuredSim {
  return [...sims].sort(
    (a, b) => b.balance_updated_at.getTime() - a.balance_updated_at.getTime() || compareSims(a, b),
  )[0] as MeasuredSim;
}

function richest(sims: readonly MeasuredSim[]): MeasuredSim {
  return [...sims].sort((a, b) => availableOf(b) - availableOf(a) || compareSims(a, b))[0] as MeasuredSim;
}

function staleBalance(sim: MeasuredSim): DomainError {
  return refusal(
    "stale_balance",
    `SIM ${sim.sim_id} balance was last measured at ${formatLocalIso(sim.balance_updated_at)}`,
    { sim_id: sim.sim_id, measured_at: sim.balance_updated_at.toISOString() },
  );
}

function insufficientBalance(sim: MeasuredSim, amount: number): DomainError {
  const measuredAt = sim.balance_updated_at;
  return refusal(
    "insufficient_balance",
    `Insufficient balance on SIM ${sim.sim_id}: requested ${amount}, available ${availableOf(sim)} (measured ${formatLocalIso(measuredAt)})`,
    {
      sim_id: sim.sim_id,
      requested: amount,
      available: availableOf(sim),
      measured_balance: sim.balance_mirror,
      reserved: sim.reserved ?? 0,
      measured_at: measuredAt.toISOString(),
    },
  );
}
