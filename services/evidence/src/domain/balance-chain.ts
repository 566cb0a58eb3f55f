// The balance chain of one SIM: in operator-timestamp order, each message's balance after
// must be the previous balance after, moved by this message's amount and fee in its
// direction. A break means a message is missing (lost, withheld), out of order, or forged.
// And the day's reconciliation: opening and closing balance, what the messages explain,
// and the difference nothing explains.

import type { Outcome } from "./outcomes.ts";
import type { MessageKind } from "./parsers/types.ts";

/** What the chain reads of a stored message. */
export interface ChainMessage {
  id: string;
  received_at: Date;
  stored_at?: Date;
  kind: MessageKind | null;
  amount: number | null;
  fee: number | null;
  /** Commission credited to the same wallet inside this receipt (absent or null: none). */
  commission?: number | null;
  balance_after: number | null;
  direction: "in" | "out" | null;
  operator_ref: string | null;
  outcome: Outcome;
}

export interface ChainBreak {
  previous_message_id: string;
  message_id: string;
  /** The balance after the previous message, moved by this one. */
  expected_balance: number;
  /** The balance after this message, as the operator printed it. */
  found_balance: number;
  /** found − expected: negative when money left that no message here explains. */
  gap: number;
}

/**
 * What a message does to the wallet whose SMS it is: +amount in, −amount out, minus the fee
 * and plus a commission credited inside the same receipt, either way; 0 for a balance reply. Null when the text does not say (no amount or no
 * direction): such a message cannot be checked and restarts the chain.
 */
export function movementOf(m: ChainMessage): number | null {
  if (m.kind === "BAL") return 0;
  if (m.amount === null || m.direction === null) return null;
  const net = (m.commission ?? 0) - (m.fee ?? 0);
  return m.direction === "in" ? m.amount + net : -m.amount + net;
}

/**
 * The messages the chain is made of: an operator's word (not an unknown sender's), read
 * once (a restatement repeats a proof already counted; the same operator reference twice is
 * one operation), in operator-timestamp order (storage order breaks ties).
 */
export function chainOf(messages: readonly ChainMessage[]): ChainMessage[] {
  const seenRefs = new Set<string>();
  return [...messages]
    .filter((m) => m.outcome !== "unknown_sender" && m.outcome !== "restated")
    .sort(
      (a, b) =>
        a.received_at.getTime() - b.received_at.getTime() ||
        (a.stored_at?.getTime() ?? 0) - (b.stored_at?.getTime() ?? 0) ||
        a.id.localeCompare(b.id),
    )
    .filter((m) => {
      if (m.operator_ref === null || m.kind === "BAL") return true;
      const key = `${m.kind ?? ""}:${m.operator_ref}`;
      if (seenRefs.has(key)) return false;
      seenRefs.add(key);
      return true;
    });
}

/** The link between two consecutive balance-bearing messages, or null when it holds or cannot be checked. */
export function linkBreak(previous: ChainMessage, m: ChainMessage): ChainBreak | null {
  if (previous.balance_after === null || m.balance_after === null) return null;
  const moved = movementOf(m);
  if (moved === null) return null;
  const expected = previous.balance_after + moved;
  if (expected === m.balance_after) return null;
  return {
    previous_message_id: previous.id,
    message_id: m.id,
    expected_balance: expected,
    found_balance: m.balance_after,
    gap: m.balance_after - expected,
  };
}

/** One message of a chain and the link it makes with the balance printed before it. */
export interface ChainLink {
  message: ChainMessage;
  /** The balance after the last earlier message of the chain that printed one (null: none). */
  balance_before: number | null;
  /** What the message moved (movementOf; null when the text does not say). */
  moved: number | null;
  /**
   * balance_before moved by this message, when the link can be checked (both balances printed
   * and the movement known); null otherwise.
   */
  expected_balance: number | null;
  /** The link does not hold (linkBreak): null when it holds or cannot be checked. */
  break: ChainBreak | null;
}

/**
 * Each message along an ordered chain (see chainOf) with its link: a message that printed no
 * balance is listed but checks nothing, and the next one is checked against the last balance
 * printed. The one walk of the chain: its breaks are the links that do not hold.
 */
export function chainLinks(chain: readonly ChainMessage[]): ChainLink[] {
  const links: ChainLink[] = [];
  let previous: ChainMessage | null = null;
  for (const m of chain) {
    const moved = movementOf(m);
    const before = previous?.balance_after ?? null;
    const expected = before !== null && m.balance_after !== null && moved !== null ? before + moved : null;
    links.push({
      message: m,
      balance_before: before,
      moved,
      expected_balance: expected,
      break: previous && expected !== null ? linkBreak(previous, m) : null,
    });
    if (m.balance_after !== null) previous = m;
  }
  return links;
}

/** Every break along an ordered chain (see chainOf). */
export function chainBreaks(chain: readonly ChainMessage[]): ChainBreak[] {
  return chainLinks(chain).flatMap((l) => (l.break ? [l.break] : []));
}

/**
 * The links of one day's chain: `before` (the last chain message before the day, or null)
 * is the first link's reference and is not listed itself.
 */
export function dayLinks(before: ChainMessage | null, day: readonly ChainMessage[]): ChainLink[] {
  return chainLinks(chainOf(before ? [before, ...day] : day)).filter((l) => l.message !== before);
}

export interface DayBalance {
  /**
   * Balance after the last message before the day; without one, the first message's balance
   * after, less what it moved; null when neither is known.
   */
  opening_balance: number | null;
  /** Balance after the day's last message that printed one (else the opening balance). */
  closing_balance: number | null;
  /** Sum of what the day's messages say they moved (in − out − fees + commissions). */
  explained_xaf: number;
  in_xaf: number;
  out_xaf: number;
  fees_xaf: number;
  /** Commissions credited inside other receipts (an agent cash-in's "Montant Net Debite"). */
  commissions_xaf: number;
  /** Day's messages that moved money without saying how much or which way. */
  unreadable_movements: number;
  breaks: ChainBreak[];
  /**
   * closing − opening − explained: money that moved without a message here to say so (a lost
   * or withheld SMS, a forged balance). Null when the day has no opening or closing balance.
   */
  unexplained_xaf: number | null;
}

/**
 * The day's balance account of one SIM: `before` is the last chain message before the day
 * (or null), `day` the day's messages in any order.
 */
export function reconcileDay(before: ChainMessage | null, day: readonly ChainMessage[]): DayBalance {
  const chain = chainOf(before ? [before, ...day] : day);
  const todays = chain.filter((m) => m !== before);
  let inXaf = 0;
  let outXaf = 0;
  let fees = 0;
  let commissions = 0;
  let unreadable = 0;
  for (const m of todays) {
    if (m.kind === "BAL") continue;
    const moved = movementOf(m);
    if (moved === null) {
      if (m.amount !== null || m.balance_after !== null) unreadable += 1;
      continue;
    }
    if (m.direction === "in") inXaf += m.amount!;
    else outXaf += m.amount!;
    fees += m.fee ?? 0;
    commissions += m.commission ?? 0;
  }
  const opening = before ? before.balance_after : openingFromFirst(todays);
  const lastWithBalance = [...todays].reverse().find((m) => m.balance_after !== null);
  const closing = lastWithBalance?.balance_after ?? opening;
  const explained = inXaf - outXaf - fees + commissions;
  return {
    opening_balance: opening,
    closing_balance: closing,
    explained_xaf: explained,
    in_xaf: inXaf,
    out_xaf: outXaf,
    fees_xaf: fees,
    commissions_xaf: commissions,
    unreadable_movements: unreadable,
    breaks: chainBreaks(chain),
    unexplained_xaf: opening === null || closing === null ? null : closing - opening - explained,
  };
}

/**
 * Without an earlier message, the day opened at the first balance it printed, less what the
 * messages up to it moved; null when one of them does not say what it moved.
 */
function openingFromFirst(todays: readonly ChainMessage[]): number | null {
  let moved = 0;
  for (const m of todays) {
    const step = movementOf(m);
    if (step === null && (m.amount !== null || m.balance_after !== null)) return null;
    moved += step ?? 0;
    if (m.balance_after !== null) return m.balance_after - moved;
  }
  return null;
}
