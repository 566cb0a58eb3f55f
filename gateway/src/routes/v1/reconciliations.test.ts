// The daily reconciliation through the gateway, the real services, PostgreSQL and Kafka: a
// simulated day per SIM (duplicated and reordered messages reconcile to zero; a withheld
// message is named with its gap and raises the chain-break alert), the fleet's totals, and
// who may read them.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, startTestSystem, type TestSystem } from "../../../../test/support/system.ts";
import { OperatorSms, type OutgoingSms } from "../../../../test/simulator/operator-sms.ts";
import { provisionHandset, type Device, type Sim } from "../../../../test/support/fleet-fixtures.ts";

let sys: TestSystem;
let admin: { token: string };
let supervisor: { token: string };
let agent: { token: string };
let clean: { device: Device; sims: Sim[] };
let lossy: { device: Device; sims: Sim[] };
/** The withheld message of the lossy day, delivered at last by the last test. */
let late: { sms: OperatorSms; message: OutgoingSms } | undefined;

// A past local day (UTC+1), its messages from 08:00 local.
const DAY_START = new Date(
  Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() - 2, 7),
);
const DAY = new Date(DAY_START.getTime() + 3600_000).toISOString().slice(0, 10);

beforeAll(async () => {
  sys = await startTestSystem({ DEVICE_COOLDOWN_S: "0" });
  admin = await sys.api.bootstrapAdmin();
  supervisor = await sys.api.createAgent(admin.token, { login: "rec-super", role: "supervisor" });
  agent = await sys.api.createAgent(admin.token, { login: "rec-agent" });
  clean = await provisionHandset(sys.api, admin.token, { operators: ["operator_a", "operator_b"], label: "Clean day" });
  lossy = await provisionHandset(sys.api, admin.token, { operators: ["operator_b"], label: "Lossy day" });
});
afterAll(async () => {
  await sys?.stop();
});

const simDay = async (simId: string, token = supervisor.token) =>
  sys.api.get(`/v1/reconciliations/daily/${simId}?day=${DAY}`, { token });
const chainOf = async (simId: string, query = "", token = supervisor.token) =>
  sys.api.get(`/v1/reconciliations/daily/${simId}/chain?day=${DAY}${query}`, { token });

/** What a message moved for the SIM, as the network printed it (fee from the text's own figures). */
function movedBy(list: OutgoingSms[], i: number, balanceOf: (s: OutgoingSms) => number | undefined): number {
  const previous = [...list.slice(0, i)]
    .reverse()
    .map(balanceOf)
    .find((b) => b !== undefined)!;
  return balanceOf(list[i])! - previous;
}

describe("a simulated day per SIM (GET /v1/reconciliations/daily/:sim_id)", () => {
  it("reconciles to zero unexplained difference when nothing is lost, whatever is duplicated or reordered", async () => {
    for (const [i, sim] of clean.sims.entries()) {
      const sms = new OperatorSms({ baseUrl: sys.url, token: clean.device.token, seed: 100 + i });
      const day = sms.dayOf(sim.simId, sim.operator, { start: DAY_START, opening: 300_000, count: 24 });
      for (const [n, m] of day.entries()) {
        if (n === 3) await sms.deliver(m, { kind: "duplicated", by: "handset" });
        else if (n === 5) await sms.deliver(m, { kind: "duplicated", by: "operator" });
        else if (n === 8 || n === 15) await sms.deliver(m, { kind: "reordered" });
        else await sms.deliver(m);
      }
      expect(sms.deliveries.every((d) => d.status === 200)).toBe(true);
      const res = await simDay(sim.simId);
      expect(res.status).toBe(200);
      expect(res.body.sims).toHaveLength(1);
      const r = res.body.sims[0];
      expect(r).toMatchObject({
        sim_id: sim.simId,
        day: DAY,
        opening_balance: 300_000,
        unexplained_xaf: 0,
        breaks: [],
      });
      expect(r.closing_balance - r.opening_balance).toBe(r.explained_xaf);
      expect(r.messages).toBe(25); // 24, the handset's retry being the same message, + the operator's repeat
      expect(res.body.fleet).toMatchObject({ sims: 1, unexplained_xaf: 0, chain_breaks: 0, sims_not_reconciled: [] });
    }
  });

  it("names the gap and the two messages around a withheld message, and raises the chain-break alert", async () => {
    const sim = lossy.sims[0];
    const sms = new OperatorSms({ baseUrl: sys.url, token: lossy.device.token, seed: 7 });
    const day = sms.dayOf(sim.simId, sim.operator, { start: DAY_START, opening: 300_000, count: 24 });
    const balanceOf = (s: OutgoingSms) => {
      const m = /Nouveau Solde ?: ?(\d+)|balance: (\d+)|est de (\d+)|balance of your account is (\d+)/i.exec(s.raw);
      return m ? Number(m[1] ?? m[2] ?? m[3] ?? m[4]) : undefined;
    };
    const withheld = day.findIndex(
      (m, i) =>
        i >= 5 &&
        (m.about.kind === "deposit" || m.about.kind === "movement") &&
        day.slice(i + 1).some((later) => balanceOf(later) !== undefined),
    );
    expect(withheld).toBeGreaterThan(0);
    const gap = movedBy(day, withheld, balanceOf);
    for (const [n, m] of day.entries()) await sms.deliver(m, n === withheld ? { kind: "lost" } : undefined);

    const res = await simDay(sim.simId);
    expect(res.status).toBe(200);
    const r = res.body.sims[0];
    expect(r.opening_balance).toBe(300_000);
    expect(r.unexplained_xaf).toBe(gap);
    expect(r.breaks).toHaveLength(1);
    const idOf = (s: OutgoingSms) => sms.deliveries.find((d) => d.sms === s)!.body.message_id;
    const before = [...day.slice(0, withheld)].reverse().find((m) => balanceOf(m) !== undefined)!;
    const after = day.slice(withheld + 1).find((m) => balanceOf(m) !== undefined)!;
    expect(r.breaks[0]).toEqual({
      previous_message_id: idOf(before),
      message_id: idOf(after),
      expected_balance: balanceOf(after)! - gap,
      found_balance: balanceOf(after),
      gap,
    });
    const alert = await eventually(
      async () => {
        const rows = await sys.db
          .query(`select context from fleet.notifications where kind = 'balance_chain_break' and sim_id = $1`, [
            sim.simId,
          ])
          .catch(() => []);
        return rows.length > 0 ? rows : undefined;
      },
      30_000,
      "the chain-break alert to reach fleet's notifications",
    );
    expect(alert[0].context).toMatchObject({ message_id: idOf(after), previous_message_id: idOf(before), gap });
    late = { sms, message: day[withheld] };
  });
});

describe("a SIM's day link by link (GET /v1/reconciliations/daily/:sim_id/chain)", () => {
  it("lists every message of the chain in order, the withheld one's gap flagged where the reconciliation names it", async () => {
    const sim = lossy.sims[0];
    const [chain, rec] = [await chainOf(sim.simId, "&limit=500"), (await simDay(sim.simId)).body.sims[0]];
    expect(chain.status).toBe(200);
    expect(chain.body).toMatchObject({ sim_id: sim.simId, day: DAY, offset: 0, breaks: 1 });
    const links = chain.body.links as Record<string, any>[];
    expect(links).toHaveLength(chain.body.total);
    // Every message delivered that day, in the operator's order (the withheld one is not there).
    expect(links.map((l) => l.message_id)).toEqual(late!.sms.deliveries.map((d) => d.body.message_id));
    const times = links.map((l) => Date.parse(l.received_at));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    const broken = links.filter((l) => l.is_break);
    const b = rec.breaks[0];
    expect(broken).toEqual([
      expect.objectContaining({
        message_id: b.message_id,
        expected_balance: b.expected_balance,
        balance_after: b.found_balance,
        gap: b.gap,
      }),
    ]);
    const previous = links.find((l) => l.message_id === b.previous_message_id)!;
    expect(broken[0].balance_before).toBe(previous.balance_after);
    expect(broken[0].expected_balance).toBe(broken[0].balance_before + broken[0].moved);
    // Every other link that can be checked holds: its printed balance is the one expected.
    for (const l of links.filter((l) => !l.is_break && l.expected_balance !== null)) {
      expect(l.balance_after).toBe(l.expected_balance);
      expect(l.gap).toBeNull();
    }
    expect(links[0].balance_before).toBeNull(); // nothing before the day on this SIM

    const page = await chainOf(sim.simId, "&offset=10&limit=5");
    expect(page.body).toMatchObject({ total: chain.body.total, breaks: 1, offset: 10 });
    expect(page.body.links).toEqual(links.slice(10, 15));
  });

  it("is for supervisors and admins; an unknown SIM is 404, a bad page 422", async () => {
    const sim = lossy.sims[0].simId;
    const byAgent = await chainOf(sim, "", agent.token);
    expect([byAgent.status, byAgent.body.context?.reason]).toEqual([403, "supervisor_required"]);
    expect((await chainOf(sim, "", admin.token)).status).toBe(200);
    const unknown = await chainOf("00000000-0000-4000-8000-000000000999");
    expect([unknown.status, unknown.body.context?.reason]).toEqual([404, "sim_not_found"]);
    for (const q of ["&limit=0", "&limit=501", "&offset=-1"]) expect((await chainOf(sim, q)).status).toBe(422);
    expect(
      (await sys.api.get(`/v1/reconciliations/daily/${sim}/chain?day=2026-02-30`, { token: admin.token })).status,
    ).toBe(422);
    const quiet = await sys.api.get(`/v1/reconciliations/daily/${sim}/chain?day=2020-01-01`, { token: admin.token });
    expect(quiet.body).toMatchObject({ total: 0, breaks: 0, links: [] });
  });
});

describe("the fleet's day (GET /v1/reconciliations/daily)", () => {
  it("sums the SIMs and names the one that does not reconcile", async () => {
    const res = await sys.api.get(`/v1/reconciliations/daily?day=${DAY}`, { token: admin.token });
    expect(res.status).toBe(200);
    const ids = res.body.sims.map((s: { sim_id: string }) => s.sim_id).sort();
    expect(ids).toEqual([...clean.sims, ...lossy.sims].map((s) => s.simId).sort());
    expect(res.body.fleet.sims).toBe(3);
    expect(res.body.fleet.sims_not_reconciled).toEqual([lossy.sims[0].simId]);
    const sum = (k: string) => res.body.sims.reduce((t: number, s: Record<string, number>) => t + (s[k] ?? 0), 0);
    for (const k of ["opening_balance", "closing_balance", "in_xaf", "out_xaf", "fees_xaf", "unexplained_xaf"])
      expect(res.body.fleet[k]).toBe(sum(k));
    expect(res.body.fleet.chain_breaks).toBe(1);
  });

  it("is for supervisors and admins only; a malformed day is 422", async () => {
    const byAgent = await sys.api.get(`/v1/reconciliations/daily?day=${DAY}`, { token: agent.token });
    expect(byAgent.status).toBe(403);
    expect(byAgent.body).toMatchObject({ code: "not_allowed", context: { reason: "supervisor_required" } });
    const bySim = await simDay(clean.sims[0].simId, agent.token);
    expect(bySim.status).toBe(403);
    expect((await sys.api.get(`/v1/reconciliations/daily?day=${DAY}`)).status).toBe(401);
    const byDevice = await sys.api.get(`/v1/reconciliations/daily`, { token: clean.device.token });
    expect([401, 403]).toContain(byDevice.status);
    for (const bad of ["2026-02-30", "yesterday", "2026-1-1"]) {
      const res = await sys.api.get(`/v1/reconciliations/daily?day=${bad}`, { token: supervisor.token });
      expect(res.status).toBe(422);
    }
  });

  it("answers 404 for an unknown SIM and 422 for a malformed SIM id, never an empty day", async () => {
    const unknown = await simDay("00000000-0000-4000-8000-000000000999", supervisor.token);
    expect([unknown.status, unknown.body.code, unknown.body.context.reason]).toEqual([
      404,
      "not_found",
      "sim_not_found",
    ]);
    const malformed = await simDay("not-a-sim", supervisor.token);
    expect([malformed.status, malformed.body.code]).toEqual([422, "invalid_request"]);
  });

  it("answers a SIM without messages that day with its balance unchanged", async () => {
    const res = await sys.api.get(`/v1/reconciliations/daily/${clean.sims[0].simId}?day=2020-01-01`, {
      token: supervisor.token,
    });
    expect(res.status).toBe(200);
    expect(res.body.sims[0]).toMatchObject({ messages: 0, opening_balance: null, unexplained_xaf: null, breaks: [] });
  });
});

describe("a withheld message that arrives at last", () => {
  it("closes the gap: the day reconciles and the fleet names no SIM", async () => {
    expect(late).toBeDefined();
    await late!.sms.deliver(late!.message);
    const healed = (await simDay(lossy.sims[0].simId)).body.sims[0];
    expect(healed).toMatchObject({ unexplained_xaf: 0, breaks: [] });
    const chain = (await chainOf(lossy.sims[0].simId, "&limit=500")).body;
    expect(chain).toMatchObject({ breaks: 0, total: late!.sms.deliveries.length });
    expect(chain.links.filter((l: { is_break: boolean }) => l.is_break)).toEqual([]);
    const fleet = (await sys.api.get(`/v1/reconciliations/daily?day=${DAY}`, { token: admin.token })).body.fleet;
    expect(fleet).toMatchObject({ sims: 3, unexplained_xaf: 0, chain_breaks: 0, sims_not_reconciled: [] });
  });

  it("resolves the chain-break alert: the notification is closed by the system, with the reason", async () => {
    type Notification = {
      kind: string;
      sim_id: string | null;
      acknowledged_at: string | null;
      acknowledged_by: string | null;
      context: Record<string, unknown>;
    };
    const chainBreak = async (query: string) =>
      ((await sys.api.get(`/v1/admin/notifications${query}`, { token: admin.token })).body as Notification[]).find(
        (n) => n.kind === "balance_chain_break" && n.sim_id === lossy.sims[0].simId,
      );
    const closed = await eventually(
      () => chainBreak("?acknowledged=true&limit=250"),
      30_000,
      "the chain-break notification to be resolved",
    );
    expect(closed.acknowledged_at).toMatch(/^\d{4}-/);
    expect(closed.acknowledged_by).toBeNull();
    expect(closed.context).toMatchObject({ resolved: true, resolution: expect.stringMatching(/closes the gap/) });
    expect(await chainBreak("?acknowledged=false&limit=250")).toBeUndefined();
  });
});
