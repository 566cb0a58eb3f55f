import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { TEST_API_KEY, type TestSystem } from "../../../../test/support/system.ts";
import { routeSystem } from "../../../../test/support/route-system.ts";
import { provisionHandset, type Device, type Sim } from "../../../../test/support/fleet-fixtures.ts";

// Every datetime the API takes has a range (gateway/src/http/route.ts, `instant`): one
// outside it is refused with 422 where the route refuses a body, and refused in its own
// result in a device's message batch, never a 500 (docs/decisions.md, "Datetimes have a range").

let sys: TestSystem;
let admin: { token: string; agentId: string };
let handset: { device: Device; sims: Sim[] };

routeSystem({ prefix: "dt" }, (s) => ({ sys, admin } = s));
beforeAll(async () => {
  handset = await provisionHandset(sys.api, admin.token, { operators: ["operator_b"], balance: 100_000 });
});

const OUT_OF_RANGE = ["9999-12-31T23:59:59Z", "0001-01-01T00:00:00Z", "1969-12-31T23:59:59Z", "2200-01-01T00:00:00Z"];

describe("datetimes outside their range", () => {
  it.each(OUT_OF_RANGE)(
    "a device's message received at %s is refused in its result, the batch answered",
    async (at) => {
      const res = await sys.api.post("/v1/device/messages", {
        token: handset.device.token,
        body: {
          sim_id: handset.sims[0].simId,
          correlate: false,
          messages: [
            { sender: "OrangeMoney", raw: `far ${at} ${randomUUID()}`, received_at: at },
            {
              sender: "OrangeMoney",
              raw: `far device clock ${randomUUID()}`,
              received_at: new Date().toISOString(),
              device_received_at: at,
            },
            // A number of three digits: a text of letters alone reads as an operator's notice (ADMIN,
            // stored) when the random id happens to hold six runs of letters and no three digits.
            { sender: "OrangeMoney", raw: `in range, ref 4096 ${randomUUID()}`, received_at: new Date().toISOString() },
          ],
        },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const results = res.body.results as { outcome: string; refused_reason?: string; refused_detail?: string }[];
      expect(
        results.map((r) => [r.outcome, r.refused_reason ?? null]),
        JSON.stringify(results),
      ).toEqual([
        ["refused", "invalid_message"],
        ["refused", "invalid_message"],
        ["not_correlated", null],
      ]);
      expect(results[0].refused_detail).toContain("received_at");
      expect(results[1].refused_detail).toContain("device_received_at");
    },
  );

  it.each(OUT_OF_RANGE)("a handset's outcome executed at %s is 422", async (at) => {
    const res = await sys.api.post("/v1/device/outcome", {
      token: handset.device.token,
      body: { operation_id: randomUUID(), outcome: "ussd_ok", executed_at: at },
    });
    expect([res.status, res.body.code]).toEqual([422, "invalid_request"]);
  });

  it.each(OUT_OF_RANGE)("a handset's operations since %s is 422", async (at) => {
    const res = await sys.api.get(`/v1/device/operations?since=${encodeURIComponent(at)}`, {
      token: handset.device.token,
    });
    expect([res.status, res.body.code]).toEqual([422, "invalid_request"]);
  });

  it.each(OUT_OF_RANGE)("a balance observed at %s is 422", async (at) => {
    const res = await sys.api.patch(`/v1/sims/${handset.sims[0].simId}/balance`, {
      apiKey: true,
      body: { balance: 50_000, observed_at: at },
    });
    expect([res.status, res.body.code]).toEqual([422, "invalid_request"]);
  });

  it.each(OUT_OF_RANGE)("a transaction dated %s is 422", async (at) => {
    const res = await sys.api.post("/v1/transactions", {
      apiKey: true,
      body: {
        request_id: randomUUID(),
        contact_id: "c-dt",
        receiver_name: "Awa Dt",
        receiver_phone: "690000123",
        operator: "operator_b",
        received_amount_xaf: 5000,
        transaction_date: at,
      },
    });
    expect([res.status, res.body.code]).toEqual([422, "invalid_request"]);
  });

  it.each(OUT_OF_RANGE)("contacts updated since %s is 422", async (at) => {
    const res = await sys.api.get(`/v1/contacts?updated_since=${encodeURIComponent(at)}`, { token: TEST_API_KEY });
    expect(res.status).toBe(422);
  });

  it("accepts the same fields in range", async () => {
    const now = new Date().toISOString();
    const since = await sys.api.get(`/v1/device/operations?since=${encodeURIComponent(now)}`, {
      token: handset.device.token,
    });
    expect(since.status).toBe(200);
    const contacts = await sys.api.get(
      `/v1/contacts?updated_since=${encodeURIComponent("2020-01-01T00:00:00+01:00")}`,
      {
        token: TEST_API_KEY,
      },
    );
    expect(contacts.status).toBe(200);
    const balance = await sys.api.patch(`/v1/sims/${handset.sims[0].simId}/balance`, {
      apiKey: true,
      body: { balance: 100_000, observed_at: now },
    });
    expect(balance.status).toBe(200);
  });
});

describe("the served OpenAPI document", () => {
  /** Every schema object of the document with its place, depth first. */
  function* schemas(value: unknown, at = "#"): Generator<[string, Record<string, unknown>]> {
    if (Array.isArray(value)) {
      for (const [i, v] of value.entries()) yield* schemas(v, `${at}/${i}`);
    } else if (value && typeof value === "object") {
      yield [at, value as Record<string, unknown>];
      for (const [k, v] of Object.entries(value)) yield* schemas(v, `${at}/${k}`);
    }
  }

  it("has no anyOf branch that is an empty schema (matching anything), the device's messages included", async () => {
    const doc = (await sys.api.get("/v1/openapi.json")).body;
    const empty = [...schemas(doc)]
      .filter(([, s]) => Array.isArray(s.anyOf))
      .filter(([, s]) => (s.anyOf as unknown[]).some((b) => b && typeof b === "object" && Object.keys(b).length === 0))
      .map(([at]) => at);
    expect(empty).toEqual([]);
    const body = doc.paths["/v1/device/messages"].post.requestBody.content["application/json"].schema;
    // The documented message is the one the route reads; other entries are refused in their result.
    expect(body.properties.messages.items).toMatchObject({
      type: "object",
      required: ["sender", "raw", "received_at"],
      properties: { received_at: { type: "string", format: "date-time" } },
    });
    expect(body.properties.messages.items.description).toContain("Any other value is taken too");
  });

  it("documents the range of every datetime a request takes", async () => {
    const doc = (await sys.api.get("/v1/openapi.json")).body;
    const inputs = Object.values(doc.paths as Record<string, Record<string, Record<string, unknown>>>).flatMap(
      (methods) => Object.values(methods).flatMap((op) => [op.parameters ?? [], op.requestBody ?? {}]),
    );
    const datetimes = [...schemas(inputs)].filter(([, s]) => s.format === "date-time").map(([, s]) => s.description);
    expect(datetimes.length).toBeGreaterThanOrEqual(7);
    for (const d of datetimes) expect(d).toContain("from 2000-01-01T00:00:00Z to before 2100-01-01T00:00:00Z");
  });
});
