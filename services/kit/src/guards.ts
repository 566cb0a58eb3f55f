// The caller guards, once: who may call a route, checked in the precedence of the reasons
// tables (no caller, then the credential's kind, then the agent's state, then the role). Each
// service names its own reasons and details (its closed set, its texts) and gets the guards
// built on them; a guard throws the service's refusal or returns the caller it let through.
// The action-named guards (refuseUnlessKind, refuseUnlessAdmin) return the refusal instead of
// throwing it, for a service that orders it among its other checks (dispatch's scope.ts), and
// word it with the action and the caller (the service's function of the failure).

import type { DomainError } from "./errors.ts";

/** What a guard reads of a caller: the token's kind and, for a session, the agent's state and role. */
export interface GuardedCaller {
  kind: string;
  role?: string | null;
  isActive?: boolean;
  deviceId?: string;
}

/** A refusal as a service words it: its reason and its detail. */
export type GuardRefusal<R extends string> = readonly [reason: R, detail: string];

/** What an action-named guard tells the service's wording: the caller, the kinds it accepts, the action. */
export interface GuardFailure {
  caller: GuardedCaller | undefined;
  accepted: readonly string[];
  action: string;
}

/** An action-named refusal as a service words it: its reason, its detail and its context. */
export type WordedRefusal<R extends string> = (
  failure: GuardFailure,
) => readonly [reason: R, detail: string, context?: Record<string, unknown>];

export interface GuardReasons<R extends string> {
  /** No caller (or no kind) at all; absent, the refusal of the kind the guard wants. */
  missing?: GuardRefusal<R>;
  /** A caller of another kind than the one wanted, per kind a guard of the service wants. */
  kind: Partial<Record<string, GuardRefusal<R>>>;
  /** A session of an inactive agent. */
  inactive?: GuardRefusal<R>;
  /** A session of another role than admin. */
  admin?: GuardRefusal<R>;
  /** refuseUnlessKind: a caller of a kind the action does not accept. */
  notAccepted?: WordedRefusal<R>;
  /** refuseUnlessAdmin: a caller other than an admin's session. */
  notAdmin?: WordedRefusal<R>;
}

export interface CallerGuards {
  /** A caller of `kind`. */
  requireKind<C extends GuardedCaller>(caller: C | undefined, kind: string): C;
  /** A session of an active agent of any role. */
  requireSession<C extends GuardedCaller>(caller: C | undefined): C;
  /** A session of an active admin. */
  requireAdmin<C extends GuardedCaller>(caller: C | undefined): C;
  /** A device token's caller that names its device. */
  requireDevice<C extends GuardedCaller>(caller: C | undefined): C & { deviceId: string };
  /** Null when the caller is of one of `kinds`, else the refusal (`notAccepted`) of `action`. */
  refuseUnlessKind(caller: GuardedCaller | undefined, kinds: readonly string[], action: string): DomainError | null;
  /**
   * Null for an admin's session, else the refusal (`notAdmin`) of `action`. The agent's state
   * is not read: the service's caller carries none (the gateway refused an inactive agent).
   */
  refuseUnlessAdmin(caller: GuardedCaller | undefined, action: string): DomainError | null;
}

export function callerGuards<R extends string>(
  refusal: (reason: R, detail: string, context?: Record<string, unknown>) => DomainError,
  reasons: GuardReasons<R>,
): CallerGuards {
  const refuse = (r: GuardRefusal<R> | undefined, what: string): never => {
    if (!r) throw new Error(`the guard has no refusal for ${what}`);
    throw refusal(r[0], r[1]);
  };
  function requireKind<C extends GuardedCaller>(caller: C | undefined, kind: string): C {
    if (!caller?.kind) refuse(reasons.missing ?? reasons.kind[kind], "a missing caller");
    if (caller!.kind !== kind) refuse(reasons.kind[kind], `a caller other than ${kind}`);
    return caller!;
  }
  function requireSession<C extends GuardedCaller>(caller: C | undefined): C {
    const c = requireKind(caller, "session");
    if (!c.isActive) refuse(reasons.inactive, "an inactive agent");
    return c;
  }
  const worded = (w: WordedRefusal<R> | undefined, failure: GuardFailure): DomainError => {
    if (!w) throw new Error(`the guard has no refusal for ${failure.action}`);
    const [reason, detail, context] = w(failure);
    return refusal(reason, detail, context);
  };
  return {
    refuseUnlessKind(caller, kinds, action) {
      if (caller?.kind && kinds.includes(caller.kind)) return null;
      return worded(reasons.notAccepted, { caller, accepted: kinds, action });
    },
    refuseUnlessAdmin(caller, action) {
      if (caller?.kind === "session" && caller.role === "admin") return null;
      return worded(reasons.notAdmin, { caller, accepted: ["session"], action });
    },
    requireKind,
    requireSession,
    requireAdmin(caller) {
      const c = requireSession(caller);
      if (c.role !== "admin") refuse(reasons.admin, "a role other than admin");
      return c;
    },
    requireDevice<C extends GuardedCaller>(caller: C | undefined) {
      const c = requireKind(caller, "device");
      if (!c.deviceId) refuse(reasons.kind.device, "a device token without its device");
      return c as C & { deviceId: string };
    },
  };
}
