import type { EntityManager } from "@transferops/kit";
import { balanceOutOfBand } from "../domain/alerts.ts";
import { notFound } from "../domain/reasons.ts";
import { balanceAlertDue, balanceBand, readingApplies } from "../domain/sims.ts";
import { raiseAlert } from "../events/alerts.ts";
import { simChanged } from "../events/fleet.ts";
import { audit } from "../store/agents.ts";
import { findSimForUpdate, writeBalance, type SimRecord } from "../store/sims.ts";

export interface Reading {
  simId: string;
  balance: number;
  observedAt: Date;
  source: string;
  /** Agent behind the reading; none for the API key and proven messages. */
  actor?: string;
  /** What the reading came through: `api_key` route or a proven message. */
  via: "api" | "proof";
  messageId?: string;
}

/**
 * Records a balance reading in the caller's transaction: mirror, time and source written
 * together with an audit row of previous and new values, unless the mirror holds a newer
 * reading (then nothing changes but the audit row saying so). A reading that enters the
 * low (or high) band raises an alert.
 */
export async function applyReading(
  em: EntityManager,
  r: Reading,
): Promise<{ sim: SimRecord; applied: boolean; previous: number | null }> {
  const sim = await findSimForUpdate(em, r.simId);
  if (!sim) throw notFound("sim", r.simId);
  const applied = readingApplies(sim.balance_updated_at, r.observedAt);
  const entry = {
    actor: r.actor,
    action: applied ? "sim.balance" : "sim.balance_ignored",
    target: sim.id,
    details: {
      via: r.via,
      source: r.source,
      message_id: r.messageId ?? null,
      previous_balance: sim.balance_mirror,
      previous_updated_at: sim.balance_updated_at?.toISOString() ?? null,
      balance: r.balance,
      observed_at: r.observedAt.toISOString(),
      applied,
    },
  };
  if (!applied) {
    await audit(em, entry);
    return { sim, applied, previous: sim.balance_mirror };
  }
  const band = balanceBand(r.balance, sim.low_balance_threshold, sim.high_balance_threshold);
  // The balance and its audit row in one statement.
  await writeBalance(em, sim.id, { balance: r.balance, observed_at: r.observedAt, source: r.source, band }, entry);
  const after: SimRecord = {
    ...sim,
    balance_mirror: r.balance,
    balance_updated_at: r.observedAt,
    balance_source: r.source,
    balance_band: band,
  };
  const due = balanceAlertDue(sim.balance_band, band);
  if (due) {
    const threshold = (due === "low" ? sim.low_balance_threshold : sim.high_balance_threshold)!;
    await raiseAlert(
      em,
      balanceOutOfBand(
        { sim_id: sim.id, msisdn: sim.msisdn, device_id: sim.device_id },
        due,
        r.balance,
        threshold,
        r.observedAt,
        new Date(),
      ),
    );
  }
  await simChanged(em, after, "balance");
  return { sim: after, applied, previous: sim.balance_mirror };
}
