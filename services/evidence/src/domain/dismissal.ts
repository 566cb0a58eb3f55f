// Dismissing a message from the unmatched queue. Checked in this order: 404 unknown
// message, 403 SIM outside the agent's grant, 409 the message names an operation; a second
// dismissal changes nothing and answers the same (idempotent, the first reason stays).

import { inScope, type Scope } from "./scope.ts";
import { DISMISS_REASONS, type DismissReason } from "./dismiss-reasons.ts";
import { invalid, refusal } from "./reasons.ts";

export { DISMISS_REASONS, type DismissReason };

export function dismissReasonOf(value: string): DismissReason {
  if (!(DISMISS_REASONS as readonly string[]).includes(value)) {
    throw invalid("reason", `must be one of ${DISMISS_REASONS.join(", ")}`, value);
  }
  return value as DismissReason;
}

export interface Dismissable {
  id: string;
  sim_id: string;
  operation_id: string | null;
  dismissed_at: Date | null;
}

/** `dismiss` writes the dismissal; `already` answers 204 without writing. */
export function decideDismiss(evidenceId: string, m: Dismissable | undefined, scope: Scope): "dismiss" | "already" {
  if (!m) throw refusal("evidence_not_found", `Evidence ${evidenceId} not found`, { evidence_id: evidenceId });
  if (!inScope(scope, m.sim_id)) {
    throw refusal("sim_not_in_grant", `SIM ${m.sim_id} is not assigned to this agent`, {
      evidence_id: m.id,
      sim_id: m.sim_id,
    });
  }
  if (m.operation_id) {
    throw refusal("evidence_already_linked", `Evidence ${m.id} is attached to operation ${m.operation_id}`, {
      evidence_id: m.id,
      operation_id: m.operation_id,
    });
  }
  return m.dismissed_at ? "already" : "dismiss";
}

/**
 * Attach (evidence side, before dispatch decides): 404 unknown message, and the same 404 for a
 * message on a SIM outside the caller's scope (whether it exists is not said); 409 already linked.
 */
export function checkAttachable(evidenceId: string, m: Dismissable | undefined, scope: Scope): Dismissable {
  if (!m || !inScope(scope, m.sim_id)) {
    throw refusal("evidence_not_found", `Evidence ${evidenceId} not found`, { evidence_id: evidenceId });
  }
  if (m.operation_id) {
    // Which operation is not said: it may be outside the caller's scope.
    throw refusal("evidence_already_linked", `Evidence ${m.id} already names an operation`, { evidence_id: m.id });
  }
  return m;
}
