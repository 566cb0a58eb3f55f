import { describe, expect, it } from "vitest";
import { DomainError, httpStatus } from "@transferops/kit";
import { requireAdmin, requireApiKey, requireDevice, requireSession } from "./agents.ts";
import { notFound, REASON_CODES, REASONS, refusal, type Reason } from "./reasons.ts";
import { checkNewSim, checkReading, patchThresholds, type SimPatch } from "./sims.ts";
import { refusalOrNone } from "../../../../test/support/refusal.ts";

const NOW = new Date("2026-11-22T12:00:00Z");

/** The reason of what `run` throws ("(none)" when nothing); fails the test when it throws something else. */
function reasonOf(run: () => unknown): string | undefined {
  const e = refusalOrNone(run);
  return e ? (e.reason ?? `(${e.status})`) : "(none)";
}

describe("fleet's reasons table", () => {
  it.each<[Reason, number, string]>([
    ["credentials_missing", 401, "not_signed_in"],
    ["credentials_invalid", 401, "not_signed_in"],
    ["login_failed", 401, "not_signed_in"],
    ["wrong_password", 401, "not_signed_in"],
    ["bootstrap_refused", 403, "not_allowed"],
    ["session_required", 403, "not_allowed"],
    ["agent_inactive", 403, "not_allowed"],
    ["admin_required", 403, "not_allowed"],
    ["device_required", 403, "not_allowed"],
    ["api_key_required", 403, "not_allowed"],
    ["reset_not_confirmed", 422, "refused"],
    ["agent_not_found", 404, "not_found"],
    ["device_not_found", 404, "not_found"],
    ["sim_not_found", 404, "not_found"],
    ["notification_not_found", 404, "not_found"],
    ["webhook_not_found", 404, "not_found"],
    ["login_exists", 409, "conflict"],
    ["admin_exists", 409, "conflict"],
    ["msisdn_exists", 409, "conflict"],
    ["device_not_active", 409, "conflict"],
    ["device_full", 409, "conflict"],
    ["slot_occupied", 409, "conflict"],
    ["sim_unassigned", 409, "conflict"],
    ["sim_busy", 409, "conflict"],
    ["sim_retired", 409, "conflict"],
    ["pin_unavailable", 500, "server_error"],
  ])("%s answers HTTP %i with code %s and the reason in context", (reason, status, code) => {
    const err = refusal(reason, "text", { sim_id: "s1" });
    expect([httpStatus(err.status), err.code, err.context]).toEqual([status, code, { reason, sim_id: "s1" }]);
  });

  it("lists every reason of the table above, so a new reason gets its row", () => {
    expect(REASON_CODES).toHaveLength(26);
    expect(REASON_CODES.every((r) => REASONS[r].when.length > 0)).toBe(true);
  });

  it("answers an unknown agent with agent_not_found and its id", () => {
    expect(notFound("agent", "a1").context).toEqual({ reason: "agent_not_found", agent_id: "a1" });
  });
});

describe("caller guards, in precedence order", () => {
  const session = { kind: "session", role: "agent", isActive: true };
  it.each<[string, () => unknown, string]>([
    ["no caller before anything else", () => requireAdmin(undefined), "credentials_missing"],
    ["a device on a board route", () => requireAdmin({ kind: "device", role: "" }), "session_required"],
    [
      "an inactive admin before the role",
      () => requireAdmin({ ...session, role: "admin", isActive: false }),
      "agent_inactive",
    ],
    ["an agent on an admin route", () => requireAdmin(session), "admin_required"],
    ["an active admin", () => requireAdmin({ ...session, role: "admin" }), "(none)"],
    ["an inactive agent on a board route", () => requireSession({ ...session, isActive: false }), "agent_inactive"],
    ["a session on a handset route", () => requireDevice(session), "device_required"],
    ["a device caller without its device", () => requireDevice({ kind: "device" }), "device_required"],
    ["a session on the balance route", () => requireApiKey(session), "api_key_required"],
    ["the API key on the balance route", () => requireApiKey({ kind: "api_key" }), "(none)"],
  ])("%s", (_, run, reason) => {
    expect(reasonOf(run)).toBe(reason);
  });
});

describe("checkNewSim: every problem of a SIM creation", () => {
  const good = { operator: "operator_a", msisdn: "650000001", pin: "1234" };
  it.each<[string, Parameters<typeof checkNewSim>[0], string[]]>([
    ["accepts a SIM without a device", good, []],
    ["accepts a SIM placed in slot 1", { ...good, deviceId: "d1", subscriptionSlot: 1 }, []],
    [
      "lists operator, msisdn and pin together",
      { operator: "operator_c", msisdn: "65", pin: "12" },
      ["operator", "msisdn", "pin"],
    ],
    ["refuses a device without a slot", { ...good, deviceId: "d1" }, ["device_id"]],
    ["refuses a slot without a device", { ...good, subscriptionSlot: 0 }, ["device_id"]],
    ["refuses slot 2", { ...good, deviceId: "d1", subscriptionSlot: 2 }, ["subscription_slot"]],
  ])("%s", (_, req, fields) => {
    expect(checkNewSim(req).map((p) => p.field)).toEqual(fields);
  });
});

describe("checkReading: the same rules for the API key's reading and a proven one", () => {
  it.each<[string, bigint, Date, string, string[]]>([
    ["accepts a reading of 0 now from the api", 0n, NOW, "api", []],
    ["tolerates a minute of clock skew", 5n, new Date(NOW.getTime() + 60_000), "sms", []],
    [
      "lists a negative balance, a future time and an unknown source",
      -1n,
      new Date(NOW.getTime() + 60_001),
      "guess",
      ["balance", "observed_at", "source"],
    ],
  ])("%s", (_, balance, observedAt, source, fields) => {
    expect(checkReading(balance, observedAt, source, NOW).map((p) => p.field)).toEqual(fields);
  });
});

describe("patchThresholds: a field not sent keeps its value, a field sent empty clears it", () => {
  const keep = { set: false };
  const patch = (low: SimPatch["low"], high: SimPatch["high"]): SimPatch => ({ low, high });
  const current = { low: 1000, high: 9000 };
  it.each<[string, SimPatch, unknown]>([
    ["keeps both when neither is sent", patch(keep, keep), { low: 1000, high: 9000 }],
    ["sets low alone", patch({ set: true, value: 2000n }, keep), { low: 2000, high: 9000 }],
    ["clears high", patch(keep, { set: true }), { low: 1000, high: null }],
    ["refuses low above the kept high", patch({ set: true, value: 9001n }, keep), "low_balance_threshold"],
    ["accepts low above a cleared high", patch({ set: true, value: 9001n }, { set: true }), { low: 9001, high: null }],
  ])("%s", (_, p, expected) => {
    const r = patchThresholds(current, p);
    expect(r instanceof DomainError ? r.violations.map((v) => v.field)[0] : r).toEqual(expected);
  });
});
