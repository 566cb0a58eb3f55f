import { randomUUID } from "node:crypto";
import { create, toBinary } from "@bufbuild/protobuf";
import { Code, type ConnectError } from "@connectrpc/connect";
import { createLogger, domainErrorFromConnect, MemoryBus, serviceClient, Topics } from "@transferops/kit";
import { AnalyticsService } from "@transferops/kit/gen/transferops/analytics/v1/analytics_service_pb";
import { AgentChangedSchema } from "@transferops/kit/gen/transferops/fleet/v1/events_pb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../../../test/infra/context.ts";
import { eventually } from "../../../../test/support/eventually.ts";
import { startAnalytics } from "../app.ts";
import { loadAnalyticsConfig } from "../config.ts";

// ListKnownAgents: the agents analytics learnt from fleet's AgentChanged events, for an
// active admin's session only.

const log = createLogger("analytics-agents-test", { level: "silent" });
const bus = new MemoryBus();
let database: TestDatabase;
let service: Awaited<ReturnType<typeof startAnalytics>>;
let client: ReturnType<typeof serviceClient<typeof AnalyticsService>>;

const AWA = "00000000-0000-4000-8000-00000000a001";
const BRUNO = "00000000-0000-4000-8000-00000000a002";
const CHANTAL = "00000000-0000-4000-8000-00000000a003";
const admin = { kind: "session", agentId: "00000000-0000-4000-8000-00000000a0ff", role: "admin", isActive: true };

async function agentChanged(
  agent: { agentId: string; fullName: string; role: string; isActive: boolean },
  occurredAt: string,
) {
  const id = randomUUID();
  await bus.publish([
    {
      topic: Topics.fleet,
      key: agent.agentId,
      value: toBinary(AgentChangedSchema, create(AgentChangedSchema, { agent, change: "updated" })),
      headers: {
        "event-id": id,
        "event-type": AgentChangedSchema.typeName,
        "occurred-at": occurredAt,
        "correlation-id": id,
      },
    },
  ]);
}

beforeAll(async () => {
  database = await freshDatabase();
  service = await startAnalytics({
    config: loadAnalyticsConfig({ DATABASE_URL: database.url, NODE_ENV: "test", LOG_LEVEL: "silent" }),
    port: 0,
    bus,
    log,
  });
  client = serviceClient(AnalyticsService, service.url);
});
afterAll(async () => {
  await service?.stop();
  await bus.close();
  await database?.drop();
});

describe("ListKnownAgents", () => {
  it("lists each agent once, by full name, as its newest event left it; an older event changes nothing", async () => {
    await agentChanged(
      { agentId: BRUNO, fullName: "Bruno Eto", role: "agent", isActive: true },
      "2026-03-01T08:00:00Z",
    );
    await agentChanged(
      { agentId: AWA, fullName: "Awa Ngono", role: "supervisor", isActive: true },
      "2026-03-01T08:00:00Z",
    );
    await agentChanged(
      { agentId: BRUNO, fullName: "Bruno Eto", role: "agent", isActive: false },
      "2026-03-02T08:00:00Z",
    );
    // Delivered late: older than Bruno's deactivation.
    await agentChanged(
      { agentId: BRUNO, fullName: "Bruno Old", role: "admin", isActive: true },
      "2026-03-01T09:00:00Z",
    );
    // Published last: once it is listed, every event before it has been applied.
    await agentChanged(
      { agentId: CHANTAL, fullName: "Chantal Mbia", role: "agent", isActive: true },
      "2026-03-03T08:00:00Z",
    );
    const expected = [
      { agentId: AWA, fullName: "Awa Ngono", role: "supervisor", isActive: true },
      { agentId: BRUNO, fullName: "Bruno Eto", role: "agent", isActive: false },
      { agentId: CHANTAL, fullName: "Chantal Mbia", role: "agent", isActive: true },
    ];
    await eventually(async () => {
      const { agents } = await client.listKnownAgents({ caller: admin });
      expect(agents.map(({ agentId, fullName, role, isActive }) => ({ agentId, fullName, role, isActive }))).toEqual(
        expected,
      );
      return true;
    });
  });

  it.each([
    ["no caller", undefined],
    ["a supervisor", { ...admin, role: "supervisor" }],
    ["an agent", { ...admin, role: "agent" }],
    ["an inactive admin", { ...admin, isActive: false }],
    ["a device", { kind: "device", deviceId: "d1d1d1d1d1d1d1d1" }],
  ])("refuses %s: admin_required", async (_, caller) => {
    const err = await client.listKnownAgents({ caller }).catch((e: unknown) => e);
    expect((err as ConnectError).code).toBe(Code.PermissionDenied);
    expect(domainErrorFromConnect(err)).toMatchObject({ status: "forbidden", reason: "admin_required" });
  });
});
