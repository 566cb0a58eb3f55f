import { describe, expect, it } from "vitest";
import { DomainError } from "./errors.ts";
import { callerGuards, type GuardedCaller } from "./guards.ts";

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

function reasonOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    if (err instanceof DomainError) return err.reason;
    throw err;
  }
  return undefined;
}

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
