import { describe, expect, it } from "vitest";
import { DomainError } from "@transferops/kit";
import {
  belongsToDevice,
  checkAttachScope,
  operationNotFound,
  checkOwnOperation,
  checkQueueScope,
  listAgentScope,
  requireAdmin,
  requireKind,
  type Actor,
} from "./scope.ts";

const actor = (kind: Actor["kind"], o: Partial<Actor> = {}): Actor => ({
  kind,
  agent_id: kind === "session" ? "me" : null,
  role: kind === "session" ? "agent" : null,
  full_name: null,
  device_id: kind === "device" ? "dev-1" : null,
  ...o,
});
const ADMIN = actor("session", { agent_id: "boss", role: "admin" });
const SUPERVISOR = actor("session", { agent_id: "sup", role: "supervisor" });
const AGENT = actor("session");
const API_KEY = actor("api_key");
const DEVICE = actor("device");

const mine = { operation_id: "o1", agent_id: "me", sim_id: "s-other" };
const theirs = { operation_id: "o2", agent_id: "other", sim_id: "s-granted" };
const theirsElsewhere = { operation_id: "o3", agent_id: "other", sim_id: "s-other" };

const code = (e: { reason?: string } | null) => e?.reason ?? null;

describe("read and cancel: own operations, every operation for admins and the API key", () => {
  it.each<[string, Actor, typeof mine, string | null]>([
    ["agent, own", AGENT, mine, null],
    ["agent, another's", AGENT, theirs, "not_in_scope"],
    ["supervisor, another's", SUPERVISOR, theirs, "not_in_scope"],
    ["admin, another's", ADMIN, theirs, null],
    ["API key, any", API_KEY, theirs, null],
    ["device, any", DEVICE, mine, "not_in_scope"],
  ])("%s", (_who, a, op, expected) => {
    expect(code(checkOwnOperation(a, op))).toBe(expected);
  });
});

describe("list scope: a filter narrows, never widens", () => {
  it.each<[string, Actor, string | null, { agent_id: string | null } | string]>([
    ["agent without filter sees itself", AGENT, null, { agent_id: "me" }],
    ["agent naming itself", AGENT, "me", { agent_id: "me" }],
    ["agent naming another is refused", AGENT, "other", "not_in_scope"],
    ["supervisor naming another is refused", SUPERVISOR, "other", "not_in_scope"],
    ["admin without filter sees the fleet", ADMIN, null, { agent_id: null }],
    ["admin naming an agent", ADMIN, "other", { agent_id: "other" }],
  ])("%s", (_who, a, requested, expected) => {
    const r = listAgentScope(a, requested);
    expect(r instanceof DomainError ? r.reason : r).toEqual(expected);
  });
});

describe("queues and settlement: own operations plus those on granted SIMs", () => {
  it.each<[string, Actor, typeof mine, string | null]>([
    ["own on any SIM", AGENT, mine, null],
    ["another's on a granted SIM", AGENT, theirs, null],
    ["another's elsewhere", AGENT, theirsElsewhere, "not_in_scope"],
    ["supervisor: another's elsewhere", SUPERVISOR, theirsElsewhere, "not_in_scope"],
    ["admin: anything", ADMIN, theirsElsewhere, null],
  ])("%s", (_who, a, op, expected) => {
    expect(code(checkQueueScope(a, op, ["s-granted"]))).toBe(expected);
  });
});

describe("attach: the agent named on the operation, supervisors and admins", () => {
  it.each<[string, Actor, typeof mine, string | null]>([
    ["agent, own", AGENT, mine, null],
    ["agent, another's: as if it did not exist", AGENT, theirs, "operation_not_found"],
    ["supervisor, another's", SUPERVISOR, theirs, null],
    ["admin, another's", ADMIN, theirs, null],
    ["API key", API_KEY, mine, "caller_not_allowed"],
  ])("%s", (_who, a, op, expected) => {
    expect(code(checkAttachScope(a, op))).toBe(expected);
  });

  it("answers another's operation exactly as an id no operation has", () => {
    const refused = checkAttachScope(AGENT, theirs);
    const unknown = operationNotFound(theirs.operation_id);
    expect(refused).not.toBeNull();
    expect([refused!.reason, refused!.status, refused!.detail, refused!.context]).toEqual([
      unknown.reason,
      unknown.status,
      unknown.detail,
      unknown.context,
    ]);
  });
});

describe("credential kinds and roles", () => {
  it("refuses a kind the action does not accept with 403 naming it", () => {
    const e = requireKind(DEVICE, ["session"], "cancel an operation");
    expect([e?.reason, e?.status, e?.detail]).toEqual([
      "caller_not_allowed",
      "forbidden",
      "A device credential cannot cancel an operation",
    ]);
    expect(requireKind(AGENT, ["session"], "x")).toBeNull();
  });

  it.each<[string, Actor, string | null]>([
    ["admin", ADMIN, null],
    ["supervisor", SUPERVISOR, "caller_not_allowed"],
    ["agent", AGENT, "caller_not_allowed"],
    ["API key", API_KEY, "caller_not_allowed"],
  ])("admin-only actions: %s", (_who, a, expected) => {
    expect(code(requireAdmin(a, "arbitrate"))).toBe(expected);
  });

  it("gives a device only the operations assigned to it", () => {
    expect(belongsToDevice(DEVICE, { device_id: "dev-1" })).toBe(true);
    expect(belongsToDevice(DEVICE, { device_id: "dev-2" })).toBe(false);
    expect(belongsToDevice(DEVICE, { device_id: null })).toBe(false);
    expect(belongsToDevice(AGENT, { device_id: null })).toBe(false);
  });
});
