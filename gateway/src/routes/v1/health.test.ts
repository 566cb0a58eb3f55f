import { describe, expect, it } from "vitest";
import { healthAnswer } from "./health.ts";

describe("the health answer", () => {
  const now = new Date("2026-11-26T01:00:00Z");

  it("is 200 ok with the health fields alone while every service serves", () => {
    expect(healthAnswer({ fleet: "SERVING", dispatch: "SERVING" }, null, now)).toEqual({
      status: 200,
      json: {
        status: "ok",
        services: { fleet: "SERVING", dispatch: "SERVING" },
        analytics: null,
        time: now.toISOString(),
      },
    });
  });

  it("is 503 with the error body naming the services not serving, and the health fields", () => {
    const res = healthAnswer({ fleet: "SERVING", dispatch: "DOWN", evidence: "NOT_SERVING" }, null, now);
    expect(res.status).toBe(503);
    expect(res.json).toEqual({
      detail: "Not serving: dispatch, evidence",
      code: "server_error",
      context: { reason: "service_not_serving", services: ["dispatch", "evidence"] },
      status: "degraded",
      services: { fleet: "SERVING", dispatch: "DOWN", evidence: "NOT_SERVING" },
      analytics: null,
      time: now.toISOString(),
    });
  });
});
