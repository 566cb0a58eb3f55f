import { describe, expect, it } from "vitest";
import { DomainError } from "./errors.ts";
import { callerGuards, type GuardedCaller } from "./guards.ts";
import { refusalOrNone } from "../../../test/support/refusal.ts";

const refusal = (reason: string, detail: string) => new DomainError("forbidden", detail, { reason });
const fleetLike = callerGuards(refusal, {
  missing: ["credentials_missing", "Sign in first"],
  kind: { session: ["session_required", "session"], device: ["device_required", "device"] },
  inactive: ["agent_inactive", "inactive"],
  admin: ["admin_required", "admin"],
});
const withoutMissing = callerGuards(refusal, { kind: { session: ["session_required", "session"] } });

const session = (over: Partial<GuardedCaller> = {}): GuardedCaller => ({
  kind: "session",
  role: "agent",
  isActive: true,
  ...over,
});

const reasonOf = (fn: () => unknown): string | undefined => refusalOrNone(fn)?.reason;

describe("the caller guards, in the reasons' precedence", () => {
  it.each([
    ["no caller", () => fleetLike.requireAdmin(undefined), "credentials_missing"],
    [
      "no caller, no missing reason: the kind's",
      () => withoutMissing.requireKind(undefined, "session"),
      "session_required",
    ],
    ["another kind", () => fleetLike.requireAdmin({ kind: "device", deviceId: "d" }), "session_required"],
    ["an inactive admin", () => fleetLike.requireAdmin(session({ role: "admin", isActive: false })), "agent_inactive"],
    ["an active agent where an admin is required", () => fleetLike.requireAdmin(session()), "admin_required"],
    ["a device token without its device", () => fleetLike.requireDevice({ kind: "device" }), "device_required"],
    ["an active admin", () => fleetLike.requireAdmin(session({ role: "admin" })), undefined],
    ["an active agent's session", () => fleetLike.requireSession(session()), undefined],
    ["a device naming its device", () => fleetLike.requireDevice({ kind: "device", deviceId: "d" }), undefined],
  ])("%s", (_name, guard, reason) => {
    expect(reasonOf(guard)).toBe(reason);
  });

  it("returns the caller it lets through", () => {
    const c = session({ role: "admin" });
    expect(fleetLike.requireAdmin(c)).toBe(c);
  });
});

describe("the action-named guards: the refusal returned, worded with the action", () => {
  const withContext = (reason: string, detail: string, context?: Record<string, unknown>) =>
    new DomainError("forbidden", detail, { reason, context });
  const dispatchLike = callerGuards(withContext, {
    kind: {},
    notAccepted: ({ caller, accepted, action }) => [
      "caller_not_allowed",
      `A ${caller?.kind} credential cannot ${action}`,
      { caller_kind: caller?.kind, accepted: [...accepted] },
    ],
    notAdmin: ({ caller, action }) => [
      "caller_not_allowed",
      `The admin role is required to ${action}`,
      { role: caller?.role },
    ],
  });

  it("lets a caller of an accepted kind through, refuses another with the service's words", () => {
    expect(dispatchLike.refuseUnlessKind({ kind: "api_key" }, ["session", "api_key"], "list operations")).toBeNull();
    const e = dispatchLike.refuseUnlessKind({ kind: "device" }, ["session"], "cancel an operation");
    expect([e?.reason, e?.detail]).toEqual(["caller_not_allowed", "A device credential cannot cancel an operation"]);
    expect(e?.context).toMatchObject({ caller_kind: "device", accepted: ["session"] });
  });

  it.each([
    ["an admin's session", session({ role: "admin" }), null],
    ["a supervisor's session", session({ role: "supervisor" }), "caller_not_allowed"],
    ["the API key", { kind: "api_key" }, "caller_not_allowed"],
    ["no caller", undefined, "caller_not_allowed"],
  ])("admin-only action: %s", (_name, caller, reason) => {
    const e = dispatchLike.refuseUnlessAdmin(caller, "arbitrate an operation");
    expect(e?.reason ?? null).toBe(reason);
    if (e) expect(e.detail).toBe("The admin role is required to arbitrate an operation");
  });

  it("is a programming error to call one the service did not word", () => {
    expect(() => withoutMissing.refuseUnlessKind({ kind: "device" }, ["session"], "x")).toThrow(/no refusal for x/);
  });
});
