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
    .filter(inChain)
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

/** Whether a message is an operator's word the chain counts: not an unknown sender's, not a restatement. */
function inChain(m: ChainMessage): boolean {
  return m.outcome !== "unknown_sender" && m.outcome !== "restated";
}

/** The link between two consecutive balance-bearing messages, or null when it holds or cannot be checked. */
export function linkBreak(previous: Pick<ChainMessage, "id" | "balance_after">, m: ChainMessage): ChainBreak | null {
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
  const chain = chainOf(before ? [before, ...day] : day);
  return chainLinks(chain).filter((l) => l.message !== before);
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
  /** The day's chain messages: its balance chain's links (dayLinks), each counted once. */
  links: number;
  /**
   * closing − opening − explained: money that moved without a message here to say so (a lost
   * or withheld SMS, a forged balance). Null when the day has no opening or closing balance.
   */
  unexplained_xaf: number | null;
}

/**
 * A day's sums part way along its chain, as a left fold: reconcileDay is `closeDay(foldDay(
 * startDay(before), chain))`, so the sums of a day's messages up to a time can be kept and
 * completed from the messages after it (today's, store/day-chains.ts; docs/decisions/
 * history.md, "Today's balance account: kept up to a time"). JSON as it is, to be kept.
 */
export interface DayRun extends Pick<
  DayBalance,
  "in_xaf" | "out_xaf" | "fees_xaf" | "commissions_xaf" | "unreadable_movements" | "breaks" | "links"
> {
  /**
   * The opening balance once known: the message before the day's, or the first balance the
   * day printed less what the messages up to it moved (null when one of them did not say).
   * Until then, what the day's messages moved so far.
   */
  opening: { known: true; balance: number | null } | { known: false; moved: number };
  /** The last chain message that printed a balance, the one before the day included: the next link's reference. */
  previous: (Pick<ChainMessage, "id"> & { balance_after: number }) | null;
  /** The balance after the day's last message that printed one (null: none yet). */
  last_balance: number | null;
}

/** A day's run before its first message: `before` is the last chain message before the day (or null). */
export function startDay(before: ChainMessage | null): DayRun {
  return {
    opening: before ? { known: true, balance: before.balance_after } : { known: false, moved: 0 },
    previous:
      before && before.balance_after !== null && inChain(before)
        ? { id: before.id, balance_after: before.balance_after }
        : null,
    last_balance: null,
    in_xaf: 0,
    out_xaf: 0,
    fees_xaf: 0,
    commissions_xaf: 0,
    unreadable_movements: 0,
    breaks: [],
    links: 0,
  };
}

/**
 * The run moved along `chain`: the day's next messages in chain order (chainOf), none of them
 * the message before the day nor one the run already holds. `run` is left as it was.
 */
export function foldDay(run: DayRun, chain: readonly ChainMessage[]): DayRun {
  const next: DayRun = { ...run, breaks: [...run.breaks], links: run.links + chain.length };
  for (const m of chain) {
    const moved = movementOf(m);
    if (next.previous && m.balance_after !== null && moved !== null) {
      const found = linkBreak(next.previous, m);
      if (found) next.breaks.push(found);
    }
    if (!next.opening.known) {
      const total = next.opening.moved + (moved ?? 0);
      if (moved === null && (m.amount !== null || m.balance_after !== null))
        next.opening = { known: true, balance: null };
      else if (m.balance_after !== null) next.opening = { known: true, balance: m.balance_after - total };
      else next.opening = { known: false, moved: total };
    }
    if (m.kind !== "BAL") {
      if (moved === null) {
        if (m.amount !== null || m.balance_after !== null) next.unreadable_movements += 1;
      } else {
        if (m.direction === "in") next.in_xaf += m.amount!;
        else next.out_xaf += m.amount!;
        next.fees_xaf += m.fee ?? 0;
        next.commissions_xaf += m.commission ?? 0;
      }
    }
    if (m.balance_after !== null) {
      next.previous = { id: m.id, balance_after: m.balance_after };
      next.last_balance = m.balance_after;
    }
  }
  return next;
}

/** The day's balance account from its run over the whole day. */
export function closeDay(run: DayRun): DayBalance {
  const opening = run.opening.known ? run.opening.balance : null;
  const closing = run.last_balance ?? opening;
  const explained = run.in_xaf - run.out_xaf - run.fees_xaf + run.commissions_xaf;
  return {
    opening_balance: opening,
    closing_balance: closing,
    explained_xaf: explained,
    in_xaf: run.in_xaf,
    out_xaf: run.out_xaf,
    fees_xaf: run.fees_xaf,
    commissions_xaf: run.commissions_xaf,
    unreadable_movements: run.unreadable_movements,
    breaks: run.breaks,
    links: run.links,
    unexplained_xaf: opening === null || closing === null ? null : closing - opening - explained,
  };
}

/**
 * The day's chain messages after `before` (the last chain message before the day, or null),
 * in chain order: `day` in any order, `before`'s operator reference counted as seen.
 */
export function dayChainOf(before: ChainMessage | null, day: readonly ChainMessage[]): ChainMessage[] {
  return chainOf(before ? [before, ...day] : day).filter((m) => m !== before);
}

/**
 * The day's balance account of one SIM: `before` is the last chain message before the day
 * (or null), `day` the day's messages in any order.
 */
export function reconcileDay(before: ChainMessage | null, day: readonly ChainMessage[]): DayBalance {
  return closeDay(foldDay(startDay(before), dayChainOf(before, day)));
}
