// The texts no rule reads, or reads only partly, grouped by their shape: one new wording of an
// operator is one group whatever its values, so a person teaches it once. Pure: the flow
// gives the messages, their SIMs' operators and the operations waiting on those SIMs.

import { CURRENCY, NUMBER, PHONE, PLACEHOLDER } from "./parsers/fields.ts";
import { foldAccents, normalizeText } from "./parsers/normalize.ts";
import type { MessageKind } from "./parsers/types.ts";

/** Why a text is listed. */
export type UnknownWhy = "unread" | "kind_without_amount" | "deposit_without_ref";

/** Kinds that read no amount by design (a notice, an offer, a refusal, a statement, a balance). */
const WITHOUT_AMOUNT: readonly MessageKind[] = [
  "BAL",
  "ADMIN",
  "MKT",
  "TPL",
  "FAIL",
  "OPERATOR_A_REC",
  "OPERATOR_B_REC",
  "COM",
];

export interface UnknownCandidate {
  id: string;
  sim_id: string;
  raw_text: string;
  kind: MessageKind | null;
  amount: number | null;
  operator_ref: string | null;
  received_at: Date;
  dismissed_at: Date | null;
}

/** Why the text is listed, or null when the parser reads it (or a person dismissed it). */
export function whyUnknown(m: UnknownCandidate): UnknownWhy | null {
  if (m.dismissed_at !== null) return null;
  if (m.kind === null) return "unread";
  if (m.kind === "DEP" && m.operator_ref === null) return "deposit_without_ref";
  if (!WITHOUT_AMOUNT.includes(m.kind) && m.amount === null) return "kind_without_amount";
  return null;
}

const MASKS: readonly [RegExp, string][] = [
  [new RegExp(PLACEHOLDER, "g"), "{mask}"],
  [/\b\d{1,4}[-/]\d{1,2}[-/]\d{1,4}(?:[ T]\d{1,2}[:h]\d{2}(?::\d{2})?)?|\b\d{1,2}:\d{2}(?::\d{2})?\b/g, "{date}"],
  [/\b[A-Z]{2}\d{6}\.\d{4}\.[A-Z0-9]+\b/g, "{ref}"],
  [new RegExp(String.raw`(?<![\w.,])(?:${CURRENCY} ?${NUMBER}|${NUMBER} ?${CURRENCY})(?![\w])`, "g"), "{amount}"],
  [new RegExp(String.raw`(?<![\w.])${PHONE}`, "g"), "{phone}"],
  // A name: two or more words in capitals ("NORBERT DOSSOU", "ETS KAMGA").
  [/\b\p{Lu}[\p{Lu}'.&-]+(?:\s+\p{Lu}[\p{Lu}'.&-]*)+\b/gu, "{name}"],
  [/[A-Za-z]*\d[\w.]*/g, "{number}"],
];

/** The text with its values masked: the key of its group. */
export function shapeOf(text: string): string {
  let shape = normalizeText(text).text;
  for (const [re, mask] of MASKS) shape = shape.replace(re, mask);
  return foldAccents(shape).toLowerCase().slice(0, 400);
}

export interface WaitingOperations {
  count: number;
  amountXaf: number;
}

export interface UnknownGroup {
  operator: string;
  shape: string;
  why: UnknownWhy;
  count: number;
  simIds: string[];
  firstSeen: Date;
  lastSeen: Date;
  sample: UnknownCandidate;
  operationsWaiting: number;
  moneyWaitingXaf: number;
  amountReadXaf: number;
}

export const MAX_GROUPS = 100;

/**
 * The listed texts grouped by operator, reason and shape, the groups with the most money
 * waiting on their SIMs first, then the most operations waiting, then the most texts.
 */
export function groupUnknown(
  messages: readonly UnknownCandidate[],
  operatorOf: (simId: string) => string | undefined,
  waitingOn: (simId: string) => WaitingOperations,
): UnknownGroup[] {
  const groups = new Map<string, UnknownGroup>();
  for (const m of messages) {
    const why = whyUnknown(m);
    const operator = operatorOf(m.sim_id);
    if (why === null || operator === undefined) continue;
    const shape = shapeOf(m.raw_text);
    const key = `${operator}\u0000${why}\u0000${shape}`;
    const g = groups.get(key);
    if (!g) {
      groups.set(key, {
        operator,
        shape,
        why,
        count: 1,
        simIds: [m.sim_id],
        firstSeen: m.received_at,
        lastSeen: m.received_at,
        sample: m,
        operationsWaiting: 0,
        moneyWaitingXaf: 0,
        amountReadXaf: m.amount ?? 0,
      });
      continue;
    }
    g.count += 1;
    if (!g.simIds.includes(m.sim_id)) g.simIds.push(m.sim_id);
    if (m.received_at < g.firstSeen) g.firstSeen = m.received_at;
    if (m.received_at >= g.lastSeen) {
      g.lastSeen = m.received_at;
      g.sample = m;
    }
    g.amountReadXaf += m.amount ?? 0;
  }
  const out = [...groups.values()];
  for (const g of out) {
    for (const simId of g.simIds) {
      const w = waitingOn(simId);
      g.operationsWaiting += w.count;
      g.moneyWaitingXaf += w.amountXaf;
    }
    g.simIds.sort();
  }
  return out
    .sort(
      (a, b) =>
        b.moneyWaitingXaf - a.moneyWaitingXaf ||
        b.operationsWaiting - a.operationsWaiting ||
        b.count - a.count ||
        b.lastSeen.getTime() - a.lastSeen.getTime(),
    )
    .slice(0, MAX_GROUPS);
}
