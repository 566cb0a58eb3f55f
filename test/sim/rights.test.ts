// The scope checker's timeline of rights (invariant 14) fails where it must: an answer asked for
// after a narrowing was acknowledged is judged against the new grant only, whatever the delay.
import { describe, expect, it } from "vitest";
import { changeOf, RightsTimeline } from "./rights.ts";

const AGENT = "00000000-0000-4000-8000-000000000001";
const [A, B] = ["sim-a", "sim-b"];

/** An agent granted SIMs A and B (fleet's table read at 0), narrowed to A: sent at 100, acknowledged at 150. */
function narrowed(): RightsTimeline {
  const t = new RightsTimeline();
  t.observed([{ id: AGENT, active: true, role: "agent", sims: [A, B] }], 0, 5);
  const answered = t.calling(AGENT, { sims: [A] }, 100)!;
  expect(answered(200, 150)).toBe(true);
  return t;
}

describe("the rights an agent may have held", () => {
  it("excuses the old grant only for an answer asked for before the narrowing was acknowledged", () => {
    const t = narrowed();
    expect(t.sees(AGENT, B, 90, 95, "evidence")).toBe(true);
    expect(t.sees(AGENT, B, 140, 160, "evidence")).toBe(true);
    // asked 1 ms after the acknowledgement: a leak however short
    expect(t.sees(AGENT, B, 151, 160, "evidence")).toBe(false);
    expect(t.sees(AGENT, A, 151, 160, "evidence")).toBe(true);
  });

  it("lets the new grant hold from the moment the change went out, and not before", () => {
    const t = narrowed();
    const widen = t.calling(AGENT, { sims: [A, B] }, 300)!;
    expect(t.sees(AGENT, B, 301, 302, "dispatch")).toBe(true); // unanswered: it may have committed
    expect(t.sees(AGENT, B, 200, 299, "dispatch")).toBe(false);
    widen(200, 320);
    expect(t.sees(AGENT, B, 400, 410, "dispatch")).toBe(true);
  });

  it("drops a refused change and keeps both for a change with no answer", () => {
    const t = narrowed();
    t.calling(AGENT, { sims: [] }, 200)!(422, 210);
    expect(t.sees(AGENT, A, 300, 310, "dispatch")).toBe(true);
    t.calling(AGENT, { sims: [B] }, 400)!(0, 410);
    expect(t.sees(AGENT, A, 500, 510, "dispatch")).toBe(true);
    expect(t.sees(AGENT, B, 500, 510, "dispatch")).toBe(true);
  });

  it("sees nothing once a deactivation is acknowledged; a supervisor sees the fleet's orphans, not its unproven", () => {
    const t = new RightsTimeline();
    t.observed([{ id: AGENT, active: true, role: "supervisor", sims: [A] }], 0, 5);
    expect(t.sees(AGENT, B, 10, 20, "evidence")).toBe(true);
    expect(t.sees(AGENT, B, 10, 20, "dispatch")).toBe(false);
    const { agentId, change } = changeOf("POST", `/v1/agents/admin/${AGENT}/deactivate`, undefined)!;
    t.calling(agentId, change, 100)!(204, 120);
    expect(t.active(AGENT, 110, 119)).toBe(true);
    expect(t.active(AGENT, 121, 130)).toBe(false);
    expect(t.sees(AGENT, A, 121, 130, "evidence")).toBe(false);
  });

  it("takes a change it did not see going out from fleet's table, the old grant counting until that read", () => {
    const t = new RightsTimeline();
    t.observed([{ id: AGENT, active: true, role: "agent", sims: [A, B] }], 0, 5);
    t.observed([{ id: AGENT, active: true, role: "agent", sims: [A, B] }], 1000, 1005);
    t.observed([{ id: AGENT, active: true, role: "agent", sims: [A] }], 2000, 2005);
    expect(t.sees(AGENT, B, 2004, 2010, "evidence")).toBe(true);
    expect(t.sees(AGENT, B, 2006, 2010, "evidence")).toBe(false);
    // an older read answered late changes nothing
    t.observed([{ id: AGENT, active: true, role: "agent", sims: [A, B] }], 1500, 2100);
    expect(t.sees(AGENT, B, 2200, 2210, "evidence")).toBe(false);
  });

  it("holds a new agent only once fleet's table showed it, with the rights it had from its start", () => {
    // A replacement created and granted between two reads: neither judged as holding nothing
    // before the read (the checkers skip it, `knows`), nor as new after it.
    const t = new RightsTimeline();
    t.observed([], 0, 5);
    expect(t.calling(AGENT, { sims: [A] }, 100)).toBeUndefined();
    expect(t.knows(AGENT)).toBe(false);
    t.observed([{ id: AGENT, active: true, role: "agent", sims: [A] }], 1000, 1005);
    expect(t.knows(AGENT)).toBe(true);
    expect(t.sees(AGENT, A, 500, 510, "evidence")).toBe(true);
    expect(t.sees(AGENT, B, 500, 510, "evidence")).toBe(false);
  });

  it("reads the change an admin's call asks for", () => {
    expect(changeOf("PATCH", `/v1/admin/agents/${AGENT}/access`, { allowed_sim_ids: [B, A] })).toEqual({
      agentId: AGENT,
      change: { sims: [A, B] },
    });
    expect(changeOf("PATCH", `/v1/agents/admin/${AGENT}`, { role: "agent" })).toEqual({
      agentId: AGENT,
      change: { role: "agent" },
    });
    expect(changeOf("GET", `/v1/admin/agents/${AGENT}/access`, undefined)).toBeUndefined();
  });
});
