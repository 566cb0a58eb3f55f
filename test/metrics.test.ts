import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger, serveMetrics } from "@transferops/kit";
import { runTransferJourney, type Journey } from "./support/journey.ts";
import { startTestSystem, type TestSystem } from "./support/system.ts";
import { UNKNOWN_ID } from "./support/constants.ts";

// /metrics during a real journey (gateway and six services in this process, real PostgreSQL
// and Kafka): the series an operator reads on the dashboard exist and carry what happened.

let sys: TestSystem;
let metricsUrl: string;
let journey: Journey;

beforeAll(async () => {
  const server = await serveMetrics(createLogger("metrics-test", { level: "silent" }), "0", "127.0.0.1");
  metricsUrl = `http://127.0.0.1:${(server!.address() as AddressInfo).port}/metrics`;
  sys = await startTestSystem({ DEVICE_COOLDOWN_S: "0" });
  journey = await runTransferJourney(sys.url);
});
afterAll(async () => {
  await sys?.stop();
});

const scrape = async () => {
  const res = await fetch(metricsUrl);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
  return res.text();
};
const value = (text: string, series: string) => {
  const line = text.split("\n").find((l) => l.startsWith(series + " "));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

describe("/metrics on its own port", () => {
  it("counts each gateway route by its pattern, never by the raw path", async () => {
    expect(journey.confirmed.status).toBe("confirmed");
    const text = await scrape();
    expect(
      value(text, 'transferops_http_request_duration_seconds_count{method="POST",route="/v1/operations",status="202"}'),
    ).toBe(1);
    expect(text).toMatch(
      /transferops_http_request_duration_seconds_count\{method="GET",route="\/v1\/device\/next",status="200"\} [1-9]/,
    );
    expect(text).not.toContain(journey.operationId);
  });

  it("times every gRPC call per service, method and code", async () => {
    const text = await scrape();
    expect(
      value(text, 'transferops_rpc_duration_seconds_count{service="dispatch",method="CreateOperation",code="OK"}'),
    ).toBe(1);
    expect(
      value(text, 'transferops_rpc_duration_seconds_count{service="evidence",method="SubmitMessages",code="OK"}'),
    ).toBe(1);
    expect(
      value(
        text,
        'transferops_rpc_duration_seconds_bucket{le="+Inf",service="dispatch",method="CreateOperation",code="OK"}',
      ),
    ).toBe(1);
  });

  it("a refusal is counted under its gRPC code", async () => {
    const res = await sys.api.get(`/v1/operations/${UNKNOWN_ID}`, {
      token: journey.adminToken,
    });
    expect(res.status).toBe(404);
    const text = await scrape();
    expect(
      value(text, 'transferops_rpc_duration_seconds_count{service="dispatch",method="GetOperation",code="NotFound"}'),
    ).toBe(1);
  });

  it("shows the proof delay of the confirmed operation and the outbox backlog of each service", async () => {
    const text = await scrape();
    expect(value(text, 'transferops_proof_delay_seconds_count{operator="operator_b",op_type="deposit"}')).toBe(1);
    for (const service of ["fleet", "dispatch", "evidence"]) {
      expect(value(text, `transferops_outbox_backlog{service="${service}"}`)).toBeGreaterThanOrEqual(0);
      expect(value(text, `transferops_outbox_oldest_age_seconds{service="${service}"}`)).toBeGreaterThanOrEqual(0);
    }
  });

  it("shows consumer lag per group and partition, and the events consumed", async () => {
    const text = await scrape();
    const lag = text.split("\n").filter((l) => l.startsWith(`transferops_consumer_lag{group="${sys.topicPrefix}`));
    expect(lag.length).toBeGreaterThan(0);
    expect(text).toMatch(
      new RegExp(
        `transferops_events_consumed_total\\{group="${sys.topicPrefix.replace(/\./g, "\\.")}[^"]+",topic="[^"]+"\\} [1-9]`,
      ),
    );
  });

  it("serves every series the Grafana dashboard queries", async () => {
    const dashboard = readFileSync(new URL("../deploy/grafana/transferops-dashboard.json", import.meta.url), "utf8");
    const queried = new Set(dashboard.match(/transferops_[a-z_]+/g));
    expect(queried.size).toBeGreaterThan(10);
    const text = await scrape();
    // A family is served when it has a sample or at least its TYPE line (a counter not yet counted).
    const family = (name: string) => name.replace(/_(bucket|count|sum)$/, "");
    const missing = [...queried].filter((name) => !new RegExp(`^# TYPE (${name}|${family(name)}) `, "m").test(text));
    expect(missing).toEqual([]);
  });

  it("shows the queue depth of a handset with queued work only", async () => {
    const series = `transferops_queue_depth{device_id="${journey.deviceId}"}`;
    expect(value(await scrape(), series)).toBeUndefined();
    for (let i = 0; i < 2; i++) {
      const res = await sys.api.post("/v1/operations", {
        apiKey: true,
        body: {
          request_id: randomUUID(),
          agent_id: journey.agentId,
          operator: "operator_b",
          client: { msisdn: "690111222", nom: "Marie-Claire Ngo" },
          montant: 1000 + i,
        },
      });
      expect(res.status).toBe(202);
    }
    expect(value(await scrape(), series)).toBe(2);
  });
});
