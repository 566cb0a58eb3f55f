import type { MessageRecord } from "./message.ts";
import { MOVEMENT_KINDS, UNMATCHED_QUEUE_KINDS } from "./outcomes.ts";

/** What one message adds to its SIM's day (evidence.daily_reconciliations' counted columns). */
export interface DayCounts {
  messages: number;
  confirmed: number;
  restated: number;
  attached: number;
  /** Done, linked to nothing, not dismissed, and of a kind a person must look at. */
  unmatched: number;
  ambiguous: number;
  divergent: number;
  dismissed: number;
  /** Money moved on the SIM by the operator's word (a message from another sender moved nothing we can count). */
  movements: number;
  proven_xaf: number;
  fees_xaf: number;
  movements_in_xaf: number;
  movements_out_xaf: number;
}

export const DAY_COUNT_COLUMNS = [
  "messages",
  "confirmed",
  "restated",
  "attached",
  "unmatched",
  "ambiguous",
  "divergent",
  "dismissed",
  "movements",
  "proven_xaf",
  "fees_xaf",
  "movements_in_xaf",
  "movements_out_xaf",
] as const satisfies readonly (keyof DayCounts)[];

/** What of a message its day's row reads: the counts, the reported balance, the day. */
export type DayFacts = Pick<
  MessageRecord,
  | "sim_id"
  | "received_at"
  | "state"
  | "outcome"
  | "is_ambiguous"
  | "operation_id"
  | "link"
  | "dismissed_at"
  | "kind"
  | "amount"
  | "fee"
  | "direction"
  | "balance_after"
>;

/** A message's share of its day's counts, as it stands. */
export function dayCountsOf(m: DayFacts): DayCounts {
  const one = (b: boolean) => (b ? 1 : 0);
  const movement = m.kind !== null && MOVEMENT_KINDS.includes(m.kind) && m.outcome !== "unknown_sender";
  return {
    messages: 1,
    confirmed: one(m.outcome === "confirmed"),
    restated: one(m.outcome === "restated"),
    attached: one(m.outcome === "attached"),
    unmatched: one(
      m.state === "done" &&
        m.operation_id === null &&
        m.dismissed_at === null &&
        (m.kind === null || UNMATCHED_QUEUE_KINDS.includes(m.kind)),
    ),
    ambiguous: one(m.is_ambiguous),
    divergent: one(m.outcome === "divergent"),
    dismissed: one(m.dismissed_at !== null),
    movements: one(movement),
    proven_xaf: m.link === "proof" && m.kind !== "BAL" ? (m.amount ?? 0) : 0,
    fees_xaf: m.link === "proof" ? (m.fee ?? 0) : 0,
    movements_in_xaf: movement && m.direction === "in" ? (m.amount ?? 0) : 0,
    movements_out_xaf: movement && m.direction === "out" ? (m.amount ?? 0) : 0,
  };
}

/**
 * What a change of one message changes in its day: its counts after less its counts before
 * (`before` undefined: the message is new). Changes of one day's messages commute, so the
 * day's row is kept by adding each change's difference, whatever their order.
 */
export function dayChange(before: DayFacts | undefined, after: DayFacts): DayCounts {
  const a = dayCountsOf(after);
  if (!before) return a;
  const b = dayCountsOf(before);
  return Object.fromEntries(DAY_COUNT_COLUMNS.map((c) => [c, a[c] - b[c]])) as unknown as DayCounts;
}

/**
 * The balance the operator reported in a message, for its day's last balance (none from
 * another sender): when the message is new (`before` undefined), or when a wording rule's
 * reading gives it a balance its stored reading did not have (the same as a new message's).
 */
export function reportedBalanceOf(before: DayFacts | undefined, m: DayFacts): { balance: number; at: Date } | null {
  if (m.balance_after === null || m.outcome === "unknown_sender") return null;
  if (before && before.balance_after === m.balance_after) return null;
  return { balance: m.balance_after, at: m.received_at };
}

/** A new reading took back the balance the stored one reported: the day's last balance is found again. */
export function balanceWithdrawn(before: DayFacts | undefined, m: DayFacts): boolean {
  return before !== undefined && before.balance_after !== null && m.balance_after === null;
}
