import type { EntityManager } from "@transferops/kit";
import type { DispatchConfig } from "../config.ts";
import {
  checkBalance,
  isDebiting,
  type DomainError,
  type Operator,
  type OpType,
  type SimCandidate,
} from "../domain/index.ts";
import { lockSimReservation, simLoads } from "../store/operations.ts";
import type { PendingDebits } from "./pending-debits.ts";
import type { FleetSim } from "./ports.ts";

/**
 * The free-balance rule's two durations, from config: how old a SIM's measured balance may be
 * (BALANCE_STALENESS_S) and how long a dial no handset reported may run (RUNNING_TIMEOUT_S, the
 * handset's lease: `HELD_DEBITS`, store/operations.ts).
 */
export type BalanceRule = Pick<DispatchConfig, "balanceStalenessMs" | "runningTimeoutS">;

/**
 * Joins fleet's SIMs with dispatch's own knowledge of their load: what the table says,
 * plus the creates of this replica not yet committed (`pending`), counted as in flight.
 */
export async function candidatesOf(
  em: EntityManager,
  sims: FleetSim[],
  rule: BalanceRule,
  pending?: PendingDebits,
): Promise<SimCandidate[]> {
  const loads = await simLoads(
    em,
    sims.map((s) => ({ sim_id: s.sim_id, measured_at: s.balance_updated_at })),
    rule.runningTimeoutS,
  );
  return sims.map((s) => ({
    sim_id: s.sim_id,
    operator: s.operator,
    status: s.status,
    device_id: s.device_id,
    device_status: s.device_status,
    balance_mirror: s.balance_mirror,
    balance_updated_at: s.balance_updated_at,
    in_flight: (loads.get(s.sim_id)?.in_flight ?? 0) + (pending?.of(s.sim_id).count ?? 0),
    reserved: loads.get(s.sim_id)?.reserved ?? 0,
    last_finished_at: loads.get(s.sim_id)?.last_finished_at ?? null,
  }));
}

/**
 * Inside the creating (or changing) transaction: takes the selected SIM's lock, always (a
 * create far from the limit once skipped it, and two concurrent creates of 16 million on a
 * SIM measured at 30 million were both accepted), and checks again under it that the SIM's
 * free balance (store/operations.ts, `HELD_DEBITS`) covers the amount, now that the creates
 * and changes that took the lock before have committed. A refusal here is the same
 * insufficient_balance selection gives.
 */
export async function reserveBalance(
  tx: EntityManager,
  sim: SimCandidate,
  request: {
    operator: Operator;
    op_type: OpType;
    amount: number;
    now: Date;
  },
  rule: BalanceRule,
  read: {
    /** The operation is already written with its amount: its own amount is not counted against it. */
    inserted: boolean;
  },
): Promise<DomainError | null> {
  if (!isDebiting(request.op_type)) return null;
  const own = read.inserted ? request.amount : 0;
  const reserved = (await lockSimReservation(tx, sim.sim_id, sim.balance_updated_at, rule.runningTimeoutS)) - own;
  return checkBalance({ ...sim, reserved }, { ...request, sim_id: sim.sim_id, staleness_ms: rule.balanceStalenessMs });
}
