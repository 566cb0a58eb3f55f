import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestSystem, type TestSystem } from "../../../../test/support/system.ts";
import { grantAccess, provisionHandset } from "../../../../test/support/fleet-fixtures.ts";

// GET /v1/events through the whole system: hints of what changed in the caller's scope,
// never of another agent's work; refused without a session token.
let sys: TestSystem;
let admin: { token: string; agentId: string };
let alice: { token: string; agentId: string };
let bob: { token: string; agentId: string };

beforeAll(async () => {
  sys = await startTestSystem();
  admin = await sys.api.bootstrapAdmin();
  alice = await sys.api.createAgent(admin.token, { login: "alice-events" });
  bob = await sys.api.createAgent(admin.token, { login: "bob-events" });
  const { sims } = await provisionHandset(sys.api, admin.token, { operators: ["operator_b"], balance: 500_000 });
  await grantAccess(sys.api, admin.token, bob.agentId, { simIds: [sims[0]!.simId] });
}, 180_000);
afterAll(async () => {
  await sys?.stop();
});

/** An open stream and the events it received so far (name and data of each). */
async function openStream(token: string) {
  const abort = new AbortController();
  const res = await fetch(sys.url + "/v1/events", {
    headers: { authorization: `Bearer ${token}` },
    signal: abort.signal,
  });
  const events: { event: string; data: any }[] = [];
  const waiters: (() => void)[] = [];
  void (async () => {
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += value;
        let end: number;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (event) events.push({ event, data: data ? JSON.parse(data) : undefined });
          for (const w of waiters.splice(0)) w();
        }
      }
    } catch {
      /* aborted */
    }
  })();
  const waitFor = async (pred: (e: { event: string; data: any }) => boolean, ms = 20_000) => {
    const deadline = Date.now() + ms;
    for (;;) {
      const found = events.find(pred);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no such event within ${ms} ms: ${JSON.stringify(events)}`);
      await new Promise<void>((r) => {
        waiters.push(r);
        setTimeout(r, 500);
      });
    }
  };
  return { res, events, waitFor, close: () => abort.abort() };
}

describe("GET /v1/events", () => {
  it("refuses a request without a session token with the usual 401 body, before any stream", async () => {
    const res = await fetch(sys.url + "/v1/events");
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ code: "not_signed_in", context: { reason: "credentials_missing" } });
  });

  it("refuses an API key: the stream is a board's", async () => {
    const res = await fetch(sys.url + "/v1/events", { headers: { "x-api-key": sys.env.API_KEYS! } });
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ context: { reason: "credential_not_accepted" } });
  });

  it("streams text/event-stream, unbuffered, and hints a new transaction to every agent (pending ones are everyone's)", async () => {
    const stream = await openStream(alice.token);
    expect(stream.res.status).toBe(200);
    expect(stream.res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(stream.res.headers.get("x-accel-buffering")).toBe("no");
    expect(stream.res.headers.get("cache-control")).toContain("no-cache");
    await stream.waitFor((e) => e.event === "ready");
    const created = await sys.api.post("/v1/transactions", {
      apiKey: true,
      body: {
        request_id: `events-${randomUUID()}`,
        contact_id: "c-1",
        receiver_name: "Paul Essomba",
        receiver_phone: "690222333",
        operator: "operator_b",
        received_amount_xaf: 10_000,
      },
    });
    expect(created.status).toBe(201);
    const hint = await stream.waitFor((e) => e.event === "transaction" && e.data.id === created.body.id);
    expect(hint.data).toEqual({ kind: "transaction", id: created.body.id, status: "pending" });
    stream.close();
  });

  it("hints an agent's operation to that agent and never to another agent", async () => {
    const aliceStream = await openStream(alice.token);
    const bobStream = await openStream(bob.token);
    await aliceStream.waitFor((e) => e.event === "ready");
    await bobStream.waitFor((e) => e.event === "ready");
    const created = await sys.api.post("/v1/operations", {
      token: bob.token,
      body: {
        request_id: randomUUID(),
        operator: "operator_b",
        client: { msisdn: "690111222", nom: "Marie Ngo" },
        montant: 5000,
      },
    });
    expect(created.status).toBe(202);
    const id = created.body.operation_id;
    const seen = await bobStream.waitFor((e) => e.event === "operation" && e.data.id === id);
    expect(seen.data.status).toBe("queued");
    // Alice's stream read her lists at least twice since (every 2 s): nothing of Bob's.
    await new Promise((r) => setTimeout(r, 5000));
    expect(aliceStream.events.filter((e) => JSON.stringify(e.data ?? {}).includes(id))).toEqual([]);
    aliceStream.close();
    bobStream.close();
  });

  it("ends the stream when the session is revoked (sign-out)", { timeout: 90_000 }, async () => {
    const carol = await sys.api.createAgent(admin.token, { login: "carol-events" });
    const stream = await openStream(carol.token);
    await stream.waitFor((e) => e.event === "ready");
    expect((await sys.api.post("/v1/agents/logout", { token: carol.token })).status).toBe(204);
    // Fleet announces the sign-out; the gateway ends the stream at once (not at its next check).
    const end = await stream.waitFor((e) => e.event === "end", 5_000);
    expect(end.data).toEqual({ reason: "credentials_changed" });
  });
});
