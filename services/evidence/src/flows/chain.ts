import type { EntityManager } from "@transferops/kit";
import { linkBreak, type ChainBreak } from "../domain/balance-chain.ts";
import type { MessageRecord } from "../domain/message.ts";
import { chainBreakAlert, chainBreakResolved } from "../events/messages.ts";
import { chainNeighbours, lockSim } from "../store/messages.ts";

/** Whether checkChain reads the message's neighbours (under its SIM's lock): finished, printing a balance, the operator's word, not a restatement. */
export function inChain(m: Pick<MessageRecord, "state" | "balance_after" | "outcome">): boolean {
  if (m.state !== "done" || m.balance_after === null) return false;
  return m.outcome !== "unknown_sender" && m.outcome !== "restated";
}

/**
 * Checks the links a finished message makes in its SIM's balance chain (with the message
 * before it and the one after it) and raises an alert for each break, in the caller's
 * transaction. Under the SIM's lock, so two messages finishing at once see each other.
 * A message that arrives late between two messages whose link broke (the break its absence
 * caused, alerted when the later one arrived) resolves that alert. The daily reconciliation
 * recomputes the whole chain on read, so such a message leaves the day with no break.
 */
export async function checkChain(em: EntityManager, m: MessageRecord): Promise<ChainBreak[]> {
  if (!inChain(m)) return [];
  await lockSim(em, m.sim_id);
  const { previous, next, repeat } = await chainNeighbours(em, m);
  if (repeat) return [];
  const breaks = [previous && linkBreak(previous, m), next && linkBreak(m, next)].filter((b): b is ChainBreak => !!b);
  const superseded = previous && next && linkBreak(previous, next);
  if (superseded) await chainBreakResolved(em, m.sim_id, superseded, m.id, breaks.length === 0);
  for (const b of breaks) await chainBreakAlert(em, m.sim_id, b);
  return breaks;
}
