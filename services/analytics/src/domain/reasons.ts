// The closed set of analytics refusal reasons, each with its status.
import { refusalsOf, type ReasonSpec } from "@transferops/kit/pure";

export const REASONS = {
  not_signed_in: { status: "unauthenticated", when: "No session caller" },
  agent_inactive: { status: "forbidden", when: "The calling agent is inactive" },
  admin_required: { status: "forbidden", when: "The route needs the admin role" },
  invalid_window: { status: "invalid", when: "days outside 1 to 365, or a malformed from/to date" },
  reversed_range: { status: "invalid", when: "from is after to" },
  future_range: { status: "invalid", when: "The range starts after today (local)" },
} as const satisfies Record<string, ReasonSpec>;

export type Reason = keyof typeof REASONS;

/** Every reason, in the table's order (the gateway and the board type theirs against it). */
export const REASON_CODES = Object.keys(REASONS) as Reason[];

/** Builds the DomainError of a reason; the status is looked up, never chosen by the caller. */
export const refusal = refusalsOf(REASONS);
