// The rules of intake's requests, pure: scope, the receiver number, the list query.

import { checkDestination, MAX_PAGE_LIMIT, OPERATORS, type DomainError } from "@transferops/kit/pure";
import { refusal } from "./reasons.ts";
import { isTransactionState, type TransactionState } from "./transaction-state.ts";

export { OPERATORS };
export const DEFAULT_LIST_LIMIT = 100;

/** Who acts, as the token says. */
export interface Actor {
  kind: string;
  agent_id: string;
  role: string;
  is_active: boolean;
  full_name: string;
}

/** Board routes: a session of an active agent. */
export function checkBoardActor(actor: Actor): DomainError | null {
  if (actor.kind !== "session" || !actor.agent_id) {
    return refusal("caller_not_allowed", "This route needs an agent session", { caller: actor.kind });
  }
  if (!actor.is_active) return refusal("agent_inactive", "Your account is inactive", { agent_id: actor.agent_id });
  return null;
}

export function checkIntakeActor(actor: Actor): DomainError | null {
  return actor.kind === "api_key"
    ? null
    : refusal("caller_not_allowed", "Transactions are created with the API key", { caller: actor.kind });
}

/** Admins see everything; every other agent sees pending work and what it launched itself. */
export function canSee(actor: Actor, t: { state: string; launched_by: string | null }): boolean {
  return actor.role === "admin" || t.state === "pending" || t.launched_by === actor.agent_id;
}

/**
 * The receiver number against the declared operator (the platform's one prefix rule,
 * kit/msisdn.ts). Returns the number in local form, or the refusal.
 */
export function checkReceiverPhone(
  operator: string,
  phone: string,
): { ok: true; msisdn: string } | { ok: false; error: DomainError } {
  const checked = checkDestination(phone);
  if (checked.kind === "invalid_msisdn") {
    return {
      ok: false,
      error: refusal("invalid_msisdn", `Receiver phone ${phone} is not a 9-digit national number`, {
        receiver_phone: phone,
      }),
    };
  }
  if (checked.kind === "operator_undetermined") {
    return {
      ok: false,
      error: refusal("operator_undetermined", `${checked.msisdn} is not a mobile-money number of any operator`, {
        receiver_phone: checked.msisdn,
      }),
    };
  }
  if (checked.operator !== operator) {
    return {
      ok: false,
      error: refusal(
        "operator_mismatch",
        `Operator mismatch: ${checked.msisdn} is ${checked.operator}, but the transaction declares ${operator}`,
        { receiver_phone: checked.msisdn, operator: checked.operator, declared_operator: operator },
      ),
    };
  }
  return { ok: true, msisdn: checked.msisdn };
}

/** What a create carries, as the route checks it. */
export interface CreateTransactionInput {
  request_id: string;
  parent_request_id?: string;
  master_transaction_id?: string;
  contact_id: string;
  customer_name?: string;
  customer_phone?: string;
  receiver_name: string;
  receiver_phone: string;
  operator: string;
  received_amount_xaf: bigint;
  rate?: number;
  send_amount_eur?: number;
}

/**
 * The checks of a create, in the order they answer: the text limits, the operator, the
 * amounts, then the receiver number against the operator. Returns the receiver number in
 * local form, or the first refusal.
 */
export function checkCreateTransaction(
  t: CreateTransactionInput,
): { ok: true; msisdn: string } | { ok: false; error: DomainError } {
  const amount = t.received_amount_xaf;
  const refused =
    checkLength("request_id", t.request_id, 200, true) ??
    checkLength("parent_request_id", t.parent_request_id, 200) ??
    checkLength("master_transaction_id", t.master_transaction_id, 200) ??
    checkLength("contact_id", t.contact_id, 200, true) ??
    checkLength("customer_name", t.customer_name, 200) ??
    checkLength("customer_phone", t.customer_phone, 20) ??
    checkLength("receiver_name", t.receiver_name, 200, true) ??
    checkLength("receiver_phone", t.receiver_phone, 20, true) ??
    ((OPERATORS as readonly string[]).includes(t.operator)
      ? null
      : refusal("invalid_request", "operator must be operator_a or operator_b", { field: "operator" })) ??
    (amount > 0n && amount <= BigInt(Number.MAX_SAFE_INTEGER)
      ? null
      : refusal("invalid_request", "received_amount_xaf must be above 0", { field: "received_amount_xaf" })) ??
    checkPositive("rate", t.rate) ??
    checkPositive("send_amount_eur", t.send_amount_eur);
  if (refused) return { ok: false, error: refused };
  return checkReceiverPhone(t.operator, t.receiver_phone);
}

function checkPositive(field: string, v: number | undefined): DomainError | null {
  return v === undefined || (Number.isFinite(v) && v > 0)
    ? null
    : refusal("invalid_request", `${field} must be above 0`, { field });
}

/** `state` and `limit` of the list; unknown state 422, limit 1..250 (0 is the default 100). */
export function parseListQuery(
  state: string,
  limit: number,
): { ok: true; state: TransactionState | null; limit: number } | { ok: false; error: DomainError } {
  if (state && !isTransactionState(state)) {
    return {
      ok: false,
      error: refusal("invalid_request", `state must be one of pending, launched, done, cancelled, closed`, {
        field: "state",
      }),
    };
  }
  if (limit < 0 || limit > MAX_PAGE_LIMIT) {
    return { ok: false, error: refusal("invalid_request", `limit must be 1 to ${MAX_PAGE_LIMIT}`, { field: "limit" }) };
  }
  return { ok: true, state: state ? (state as TransactionState) : null, limit: limit || DEFAULT_LIST_LIMIT };
}

/** Text limits of the contract, checked again in the service (the gateway checks first). */
export function checkLength(field: string, value: string | undefined | null, max: number, required = false) {
  if (value === undefined || value === null) {
    return required ? refusal("invalid_request", `${field} is required`, { field }) : null;
  }
  if (required && !value.trim()) return refusal("invalid_request", `${field} is required`, { field });
  if (value.length > max) return refusal("invalid_request", `${field} is longer than ${max} characters`, { field });
  if (value.includes("\u0000")) return refusal("invalid_request", `${field} contains a NUL character`, { field });
  return null;
}

/**
 * A launch's answer to a dispatch refusal. The contract gives the launch a 423 of its own
 * ("the device holding the selected SIM is frozen"), where a create answers 422
 * `no_active_sim`: dispatch names the frozen handsets in that refusal's context, and the
 * launch answers 423 `device_frozen` with them. Everything else passes through as is.
 */
export function launchRefusal(refused: DomainError): DomainError {
  const frozen = refused.context.frozen_device_ids;
  if (refused.reason !== "no_active_sim" || !Array.isArray(frozen) || frozen.length === 0) return refused;
  return refusal("device_frozen", `The handset holding the SIM for this transfer is frozen (${frozen.join(", ")})`, {
    operator: refused.context.operator,
    device_ids: frozen,
  });
}
