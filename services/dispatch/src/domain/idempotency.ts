// Who may use a request_id, and when a known one is a replay.
//
// A request_id is one execution across the fleet. Two rules keep a replay from handing
// a caller an operation that is not the one it asked for:
//
//   1. `tx-` is intake's: a launch's operation is `tx-<transaction_id>`, and pending
//      transaction ids are visible to every agent. Anyone else creating that id first
//      would have the launch record their operation (their amount, their recipient) on
//      the transaction. So the prefix is refused from every caller but intake (403:
//      the value is well formed and would be accepted from intake; who sends it decides).
//   2. A replay is the same request again: a known request_id with another amount,
//      destination, operator, type, named SIM, owning agent, recipient name, contact,
//      name-check flag or parent is a conflict (409
//      `request_id_reused`, naming the fields that differ and nothing of the operation),
//      never the first operation presented as this one's (Stripe's idempotency keys,
//      TigerBeetle's `exists_with_different_*`).

import type { DomainError } from "./errors.ts";
import { normaliseMsisdn } from "./operators.ts";
import { refusal } from "./reasons.ts";
import type { ActorKind } from "./scope.ts";

/** The request_id prefix of the operations intake's launches create. */
export const LAUNCH_REQUEST_ID_PREFIX = "tx-";

export function checkRequestIdNamespace(caller: ActorKind, requestId: string): DomainError | null {
  if (caller === "intake" || !requestId.toLowerCase().startsWith(LAUNCH_REQUEST_ID_PREFIX)) return null;
  return refusal(
    "request_id_reserved",
    `request_id values starting with '${LAUNCH_REQUEST_ID_PREFIX}' belong to transaction launches`,
    { request_id: requestId, reserved_prefix: LAUNCH_REQUEST_ID_PREFIX },
  );
}

/** What a create asked for, as compared with the operation its request_id already names. */
export interface ReplayedRequest {
  readonly request_id: string;
  /**
   * The owning agent the API key named. Null for a session (its scope, the owner or an
   * admin, was checked before; the owner is not part of its body) and for intake (a
   * launch's id belongs to one transaction, whichever agent's launch completes it).
   */
  readonly agent_id: string | null;
  readonly operator: string;
  readonly op_type: string;
  readonly montant: number;
  readonly msisdn: string;
  /** Only a named SIM is compared: without one the server chose, and any choice is the same request. */
  readonly sim_id: string | null;
  /** As stored: the body's value, true when absent, false for an account query. */
  readonly partner_verified: boolean;
  /** As stored: an empty name is none. */
  readonly dest_name: string | null;
  readonly contact_id: string | null;
  readonly parent_operation_id: string | null;
}

export interface KnownOperation {
  readonly agent_id: string;
  readonly operator: string;
  readonly op_type: string;
  readonly montant: number;
  readonly msisdn_dest: string;
  readonly sim_id: string | null;
  readonly partner_verified: boolean;
  readonly dest_name: string | null;
  readonly contact_id: string | null;
  readonly parent_operation_id: string | null;
}

/** The body fields in which a replay differs from the operation first created, in a fixed order. */
export function replayDifferences(known: KnownOperation, request: ReplayedRequest): string[] {
  const msisdn = normaliseMsisdn(request.msisdn) ?? request.msisdn;
  const differs: [string, boolean][] = [
    ["agent_id", request.agent_id !== null && known.agent_id !== request.agent_id],
    ["operator", known.operator !== request.operator],
    ["type_op", known.op_type !== request.op_type],
    ["montant", known.montant !== request.montant],
    ["client.msisdn", known.msisdn_dest !== msisdn],
    ["sim_id", request.sim_id !== null && known.sim_id !== request.sim_id],
    // A replay that drops the name check, or names another recipient, contact or parent,
    // would be handed an operation dialled on other terms than the ones it sent.
    // (An account query's is always false: with another type, type_op alone is the difference.)
    ["partner_verified", known.op_type === request.op_type && known.partner_verified !== request.partner_verified],
    ["client.nom", known.dest_name !== request.dest_name],
    ["contact_id", known.contact_id !== request.contact_id],
    ["parent_operation_id", known.parent_operation_id !== request.parent_operation_id],
  ];
  return differs.filter(([, d]) => d).map(([field]) => field);
}

export function checkReplay(known: KnownOperation, request: ReplayedRequest): DomainError | null {
  const fields = replayDifferences(known, request);
  if (fields.length === 0) return null;
  return refusal(
    "request_id_reused",
    `request_id ${request.request_id} was first used for another request (${fields.join(", ")} differ); send a new request_id for a new operation`,
    { request_id: request.request_id, differs: fields },
  );
}
