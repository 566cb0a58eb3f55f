// Test support: what a parsed text would do against an active operation, as evidence and
// dispatch decide together. Evidence routes only a DEP to dispatch for a transfer (and only a
// BAL for a balance check) and sends
// the number as read; dispatch refuses a number that is not the destination in any reading
// (the kit's isSameNumber, used by dispatch/src/domain/correlation.ts).

import { isSameNumber } from "@transferops/kit/pure";
import { routeOf } from "../../outcomes.ts";
import { canConfirm } from "../parse.ts";
import type { ParsedMessage } from "../types.ts";

/** Whether the text would confirm one active transfer of its amount sent to `destination`. */
export function wouldConfirm(p: ParsedMessage, destination: string): boolean {
  if (routeOf(p.kind, true, p.rule) !== "correlate" || !canConfirm(p.kind)) return false;
  return p.counterparty_msisdn === null || isSameNumber(p.counterparty_msisdn, destination) !== false;
}

/**
 * Whether the text would go to dispatch as a balance reply, which proves an active balance
 * check (dispatch matches a BAL against balance checks only, by its balance).
 */
export function wouldProveBalance(p: ParsedMessage): boolean {
  return routeOf(p.kind, true, p.rule) === "correlate" && p.kind === "BAL" && p.balance_after !== null;
}

/** A Cameroon destination that is not `counterparty` in any reading. */
export function otherDestination(counterparty: string | null): string {
  return counterparty !== null && isSameNumber(counterparty, "690000001") === true ? "690000002" : "690000001";
}
