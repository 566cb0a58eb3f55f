import { describe, expect, it } from "vitest";
import type { Caller } from "@transferops/kit";
import { checkAttachable, decideDismiss, dismissReasonOf, DISMISS_REASONS } from "./dismissal.ts";
import { requireBoard, requireDevice, requireSimOfDevice, scopeOf } from "./scope.ts";
import { refusalOrNone, refusalThrownBy } from "../../../../test/support/refusal.ts";

function refusalOf(fn: () => unknown): { status: string; reason: string } {
  const e = refusalOrNone(fn);
  return e ? { status: e.status, reason: e.reason ?? e.code } : { status: "none", reason: "none" };
}

const fleet = { fleet: true } as const;
const grant = scopeOf({ role: "agent" } as Caller, ["sim-1"]);
const orphan = { id: "e1", sim_id: "sim-1", operation_id: null, dismissed_at: null };

describe("dismissal, in precedence order", () => {
  it.each([
    ["unknown message", undefined, grant, "not_found", "evidence_not_found"],
    [
      "SIM outside the grant beats attached",
      { ...orphan, sim_id: "sim-2", operation_id: "op" },
      grant,
      "forbidden",
      "sim_not_in_grant",
    ],
    ["attached", { ...orphan, operation_id: "op" }, grant, "conflict", "evidence_already_linked"],
    ["attached, seen by a supervisor", { ...orphan, operation_id: "op" }, fleet, "conflict", "evidence_already_linked"],
  ])("%s", (_name, m, scope, status, reason) => {
    expect(refusalOf(() => decideDismiss("e1", m as never, scope))).toEqual({ status, reason });
  });

  it("dismisses an orphan in scope, and answers the same again without writing", () => {
    expect(decideDismiss("e1", orphan, grant)).toBe("dismiss");
    expect(decideDismiss("e1", { ...orphan, dismissed_at: new Date() }, grant)).toBe("already");
    expect(decideDismiss("e1", { ...orphan, sim_id: "sim-9" }, fleet)).toBe("dismiss");
  });

  it("knows exactly the contract's reasons", () => {
    for (const r of DISMISS_REASONS) expect(dismissReasonOf(r)).toBe(r);
    expect(refusalOf(() => dismissReasonOf("spam"))).toEqual({ status: "invalid", reason: "invalid_request" });
  });
});

describe("attach, evidence side", () => {
  it("404s an unknown message, 409s one that names an operation", () => {
    expect(refusalOf(() => checkAttachable("e1", undefined, grant))).toEqual({
      status: "not_found",
      reason: "evidence_not_found",
    });
    expect(refusalOf(() => checkAttachable("e1", { ...orphan, operation_id: "op" }, grant))).toEqual({
      status: "conflict",
      reason: "evidence_already_linked",
    });
    expect(checkAttachable("e1", { ...orphan, dismissed_at: new Date() }, grant)).toMatchObject({ id: "e1" });
  });

  it("answers a message outside the caller's scope as an unknown one, linked or not", () => {
    const unknown = refusalThrownBy(() => checkAttachable("e1", undefined, grant));
    for (const m of [
      { ...orphan, sim_id: "sim-2" },
      { ...orphan, sim_id: "sim-2", operation_id: "op" },
    ]) {
      const e = refusalThrownBy(() => checkAttachable("e1", m, grant));
      expect([e.reason, e.status, e.detail, e.context]).toEqual([
        unknown.reason,
        unknown.status,
        unknown.detail,
        unknown.context,
      ]);
    }
    expect(checkAttachable("e1", { ...orphan, sim_id: "sim-2" }, fleet)).toMatchObject({ id: "e1" });
  });
});

describe("callers", () => {
  const session = { kind: "session", isActive: true, role: "agent", agentId: "a" } as Caller;
  it("scopes agents to their grant and supervisors and admins to the fleet", () => {
    expect(scopeOf({ ...session, role: "supervisor" }, [])).toEqual({ fleet: true });
    expect(scopeOf({ ...session, role: "admin" }, [])).toEqual({ fleet: true });
    const s = scopeOf(session, ["x"]);
    expect(s.fleet).toBe(false);
  });
  it("refuses board routes to devices and inactive agents, handset routes to sessions", () => {
    expect(refusalOf(() => requireBoard({ kind: "device", deviceId: "d" } as Caller))).toEqual({
      status: "forbidden",
      reason: "session_required",
    });
    expect(refusalOf(() => requireBoard({ ...session, isActive: false }))).toEqual({
      status: "forbidden",
      reason: "agent_inactive",
    });
    expect(refusalOf(() => requireDevice(session))).toEqual({ status: "forbidden", reason: "device_required" });
  });
  it("refuses a SIM that is unknown, unassigned or in another handset", () => {
    const device = { kind: "device", deviceId: "d1" } as Caller;
    for (const sim of [undefined, { sim_id: "s" }, { sim_id: "s", device_id: "d2" }]) {
      expect(refusalOf(() => requireSimOfDevice(device, sim, "s"))).toEqual({
        status: "forbidden",
        reason: "sim_not_assigned_to_device",
      });
    }
    expect(() => requireSimOfDevice(device, { sim_id: "s", device_id: "d1" }, "s")).not.toThrow();
  });
});
