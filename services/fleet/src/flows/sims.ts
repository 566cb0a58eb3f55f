import { DomainError, type EntityManager } from "@transferops/kit";
import { balanceOutOfBand } from "../domain/alerts.ts";
import { notFound } from "../domain/reasons.ts";
import { balanceAlertDue, balanceBand, patchThresholds, type SimPatch } from "../domain/sims.ts";
import type { SimStatus } from "../domain/vocabulary.ts";
import { raiseAlert } from "../events/alerts.ts";
import { simChanged } from "../events/fleet.ts";
import { audit } from "../store/agents.ts";
import { findSimForUpdate, updateSimFields, type SimRecord } from "../store/sims.ts";
import type { FleetDeps } from "./ports.ts";

/**
 * An admin's change of a SIM's status or balance thresholds (the patch already checked):
 * the row, the balance alert a new threshold makes due, the audit entry and SimChanged,
 * in one transaction under the SIM's lock.
 */
export async function updateSim(deps: FleetDeps, actor: string, simId: string, patch: SimPatch): Promise<SimRecord> {
  const sim = await deps.db.tx(async (em) => {
    const before = await findSimForUpdate(em, simId);
    if (!before) throw notFound("sim", simId);
    const after = patched(before, patch);
    await updateSimFields(em, before.id, {
      status: after.status,
      low_balance_threshold: after.low_balance_threshold,
      high_balance_threshold: after.high_balance_threshold,
      balance_band: after.balance_band,
    });
    await alertIfOutOfBand(em, before, after);
    await audit(em, {
      actor,
      action: "sim.update",
      target: before.id,
      details: {
        from: {
          status: before.status,
          low_balance_threshold: before.low_balance_threshold,
          high_balance_threshold: before.high_balance_threshold,
        },
        to: {
          status: after.status,
          low_balance_threshold: after.low_balance_threshold,
          high_balance_threshold: after.high_balance_threshold,
        },
      },
    });
    await simChanged(em, after, "updated");
    return after;
  });
  deps.published();
  return sim;
}

/** The SIM with the patch applied; a threshold change is judged against the measured balance at once. */
function patched(before: SimRecord, patch: SimPatch): SimRecord {
  const thresholds = patchThresholds({ low: before.low_balance_threshold, high: before.high_balance_threshold }, patch);
  if (thresholds instanceof DomainError) throw thresholds;
  const { low, high } = thresholds;
  return {
    ...before,
    status: (patch.status ?? before.status) as SimStatus,
    low_balance_threshold: low,
    high_balance_threshold: high,
    balance_band: before.balance_mirror === null ? before.balance_band : balanceBand(before.balance_mirror, low, high),
  };
}

/** Raises the balance alert when the new band leaves the old one for low or high (a measured balance only). */
async function alertIfOutOfBand(em: EntityManager, before: SimRecord, after: SimRecord): Promise<void> {
  const due = before.balance_mirror === null ? null : balanceAlertDue(before.balance_band, after.balance_band);
  if (!due) return;
  const threshold = (due === "low" ? after.low_balance_threshold : after.high_balance_threshold)!;
  await raiseAlert(
    em,
    balanceOutOfBand(
      { sim_id: after.id, msisdn: after.msisdn, device_id: after.device_id },
      due,
      before.balance_mirror!,
      threshold,
      before.balance_updated_at!,
      new Date(),
    ),
  );
}
