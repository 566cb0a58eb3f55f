// The rules of intake's requests, pure: scope, the receiver number, the list query.

import { checkDestination, type DomainError } from "@transferops/kit";
import { refusal } from "./reasons.ts";
import { isTransactionState, type TransactionState } from "./transaction-state.ts";

export const OPERATORS = ["operator_a", "operator_b"] as const;
export const DEFAULT_LIST_LIMIT = 100;
export const MAX_LIST_LIMIT = 250;

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
  if (limit < 0 || limit > MAX_LIST_LIMIT) {
    return { ok: false, error: refusal("invalid_request", `limit must be 1 to ${MAX_LIST_LIMIT}`, { field: "limit" }) };
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
