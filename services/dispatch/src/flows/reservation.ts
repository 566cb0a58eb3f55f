import type { EntityManager } from "@transferops/kit";
import {
  checkBalance,
  isDebiting,
  type DomainError,
  type Operator,
  type OpType,
  type SimCandidate,
} from "../domain/index.ts";
import { lockSimReservation, reservedOn, simLoads } from "../store/operations.ts";
import type { PendingDebit, PendingDebits } from "./pending-debits.ts";
import type { FleetSim } from "./ports.ts";

/**
 * Joins fleet's SIMs with dispatch's own knowledge of their load: what the table says,
 * plus the creates of this replica not yet committed (`pending`), counted as in flight.
 */
export async function candidatesOf(
  em: EntityManager,
  sims: FleetSim[],
  pending?: PendingDebits,
): Promise<SimCandidate[]> {
  const loads = await simLoads(
    em,
    sims.map((s) => s.sim_id),
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
 * Above this much FCFA left after a create (measured balance less everything committed
 * and everything this replica is still creating on the SIM), the SIM's lock is skipped.
 * Within one replica that is exact (each create counts every earlier one, committed or
 * pending); across replicas only more than this much created at the same instant on one
 * SIM by other replicas could overdraw it (20 creates at the default 500,000 ceiling).
 */
export const RESERVATION_LOCK_HEADROOM = 10_000_000;

/**
 * Inside the creating transaction: locks the selected SIM's debits and checks again that
 * its available balance covers the amount, now that concurrent creates have committed
 * theirs. A refusal here is the same insufficient_balance selection gives.
 */
export async function reserveBalance(
  tx: EntityManager,
  sim: SimCandidate,
  request: { operator: Operator; op_type: OpType; amount: number; now: Date; staleness_ms: number },
  read: {
    /** The new operation is already inserted: its own amount is not counted against it. */
    inserted: boolean;
    /**
     * What the SIM had committed, read by the insert's own statement (its snapshot, without
     * the new row): spares the read here.
     */
    reservedBefore?: number;
  },
  /**
   * This create among this replica's creates not yet committed (see PendingDebits), and
   * `others`, the SIM's pending debits taken before the read (by default, now).
   */
  pending?: { debits: PendingDebits; own: PendingDebit; others?: { amount: number; unlocked: number } },
): Promise<DomainError | null> {
  if (!isDebiting(request.op_type)) return null;
  const own = read.inserted ? request.amount : 0;
  // Taken before the read: a create of this replica is either still pending here or
  // committed before the read starts, so none is missed (one may count twice: safe side).
  const others = pending ? (pending.others ?? pending.debits.of(sim.sim_id)) : { amount: 0, unlocked: 0 };
  const othersPending = others.amount - (pending?.own.amount ?? 0);
  // Far from the limit, concurrent creates cannot exhaust the SIM: no lock, no queue.
  const seen = (read.reservedBefore ?? (await reservedOn(tx, sim.sim_id)) - own) + othersPending;
  if (sim.balance_mirror !== null && sim.balance_mirror - seen - request.amount >= RESERVATION_LOCK_HEADROOM) {
    pending?.own.skipLock();
    return null;
  }
  // Under the lock, the creates that took it before have committed; those that skipped
  // it are counted from here until they commit.
  const reserved = (await lockSimReservation(tx, sim.sim_id)) - own + others.unlocked;
  return checkBalance({ ...sim, reserved }, { ...request, sim_id: sim.sim_id });
}
