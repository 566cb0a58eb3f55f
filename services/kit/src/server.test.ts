import * as grpc from "@grpc/grpc-js";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "./log.ts";
import { served, startGrpcServer, type GrpcServer } from "./server.ts";
import { DomainError } from "./errors.ts";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { ConnectError } from "@connectrpc/connect";
import { errorBodyFromConnect } from "./errors.ts";
import { serviceClient } from "./client.ts";
import { currentContext, runWithContext } from "./context.ts";
import {
  Health,
  HealthCheckRequestSchema,
  HealthCheckResponseSchema,
  HealthCheckResponse_ServingStatus as Status,
} from "./gen/grpc/health/v1/health_pb.ts";
import * as reflection from "./gen/grpc/reflection/v1/reflection_pb.ts";
import * as reflectionAlpha from "./gen/grpc/reflection/v1alpha/reflection_pb.ts";
import { AnalyticsService } from "./gen/transferops/analytics/v1/analytics_service_pb.ts";
import { eventually } from "../../../test/support/eventually.ts";

let server: GrpcServer;
let client: grpc.Client;

beforeAll(async () => {
  server = await startGrpcServer({
    name: "kit-test",
    port: 0,
    log: createLogger("kit-test", { level: "silent" }),
    services: [
      served(AnalyticsService, {
        async listKnownAgents() {
          throw new DomainError("refused", "No active operator_a SIM available", {
            reason: "no_active_sim",
            context: { operator: "operator_a" },
          });
        },
        // Answers with what the call brought: its correlation id and the time left of its deadline.
        async getAnalytics() {
          const ctx = currentContext();
          const left = ctx?.deadline === undefined ? -1 : ctx.deadline - Date.now();
          throw new DomainError("refused", "seen", {
            reason: "seen",
            context: { correlation: ctx?.correlationId, left },
          });
        },
      }),
    ],
  });
  client = new grpc.Client(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure());
});
afterAll(async () => {
  client?.close();
  await server?.close();
});

function unary<Req, Res>(
  path: string,
  req: Req,
  ser: (r: Req) => Uint8Array,
  de: (b: Uint8Array) => Res,
): Promise<Res> {
  return new Promise((resolve, reject) =>
    client.makeUnaryRequest(
      path,
      (r: Req) => Buffer.from(ser(r)),
      (b: Buffer) => de(b),
      req,
      (err, res) => (err ? reject(err) : resolve(res!)),
    ),
  );
}

describe("gRPC server seen by an independent client (@grpc/grpc-js)", () => {
  it("answers grpc.health.v1 Check for the server and for each served service", async () => {
    const check = (service: string) =>
      unary(
        "/grpc.health.v1.Health/Check",
        create(HealthCheckRequestSchema, { service }),
        (r) => toBinary(HealthCheckRequestSchema, r),
        (b) => fromBinary(HealthCheckResponseSchema, b),
      );
    expect((await check("")).status).toBe(Status.SERVING);
    expect((await check("transferops.analytics.v1.AnalyticsService")).status).toBe(Status.SERVING);
    await expect(check("no.such.Service")).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
  });

  for (const [version, mod] of [
    ["v1", reflection],
    ["v1alpha", reflectionAlpha],
  ] as const) {
    it(`lists services and serves descriptors through reflection ${version}`, async () => {
      const call = client.makeBidiStreamRequest(
        `/grpc.reflection.${version}.ServerReflection/ServerReflectionInfo`,
        (r: reflection.ServerReflectionRequest) =>
          Buffer.from(
            toBinary(mod.ServerReflectionRequestSchema as typeof reflection.ServerReflectionRequestSchema, r),
          ),
        (b: Buffer) =>
          fromBinary(mod.ServerReflectionResponseSchema as typeof reflection.ServerReflectionResponseSchema, b),
      );
      const answers: reflection.ServerReflectionResponse[] = [];
      const done = new Promise<void>((resolve, reject) => {
        call.on("data", (d: reflection.ServerReflectionResponse) => answers.push(d));
        call.on("end", resolve);
        call.on("error", reject);
      });
      const requestSchema = mod.ServerReflectionRequestSchema as typeof reflection.ServerReflectionRequestSchema;
      call.write(create(requestSchema, { messageRequest: { case: "listServices", value: "*" } }));
      call.write(
        create(requestSchema, {
          messageRequest: { case: "fileContainingSymbol", value: "transferops.analytics.v1.AnalyticsService" },
        }),
      );
      call.end();
      await done;
      const listed = answers[0].messageResponse;
      expect(listed.case).toBe("listServicesResponse");
      const names = listed.case === "listServicesResponse" ? listed.value.service.map((s) => s.name) : [];
      expect(names).toEqual(
        expect.arrayContaining([
          "transferops.analytics.v1.AnalyticsService",
          "grpc.health.v1.Health",
          "grpc.reflection.v1.ServerReflection",
          "grpc.reflection.v1alpha.ServerReflection",
        ]),
      );
      const files = answers[1].messageResponse;
      expect(files.case).toBe("fileDescriptorResponse");
      const fileNames =
        files.case === "fileDescriptorResponse"
          ? files.value.fileDescriptorProto.map((b) => fromBinary(FileDescriptorProtoSchema, b).name)
          : [];
      expect(fileNames).toContain("transferops/analytics/v1/analytics_service.proto");
      expect(fileNames).toContain("transferops/common/v1/identity.proto");
    });
  }

  // The services call each other with the kit's client (the Connect protocol); other gRPC
  // clients (buf curl, grpc-js) use gRPC. A refusal reads the same to both.
  for (const [protocol, analytics] of [
    ["gRPC", () => createClient(AnalyticsService, createGrpcTransport({ baseUrl: server.url }))],
    ["the kit's client", () => serviceClient(AnalyticsService, server.url)],
  ] as const) {
    it(`maps a domain refusal to a Connect error carrying the default code, detail, and the reason in context (${protocol})`, async () => {
      const err = await analytics()
        .listKnownAgents({})
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConnectError);
      expect(errorBodyFromConnect(err as ConnectError)).toEqual({
        status: 422,
        body: {
          detail: "No active operator_a SIM available",
          code: "refused",
          context: { reason: "no_active_sim", operator: "operator_a" },
        },
      });
    });
  }
});

describe("a call through the kit's client", () => {
  const seen = async () => {
    const err = await serviceClient(AnalyticsService, server.url)
      .getAnalytics({})
      .catch((e: unknown) => e);
    return errorBodyFromConnect(err as ConnectError).body.context;
  };

  it("carries the caller's correlation id and the time left before its deadline", async () => {
    const context = await runWithContext({ correlationId: "corr-kit-1", deadline: Date.now() + 3_000 }, seen);
    expect(context.correlation).toBe("corr-kit-1");
    expect(context.left).toBeGreaterThan(2_000);
    expect(context.left).toBeLessThanOrEqual(3_000);
  });

  it("outside any request, gets a correlation id of its own and the default deadline (10 s)", async () => {
    const context = await seen();
    expect(context.correlation).toMatch(/^[0-9a-f-]{36}$/);
    expect(context.left).toBeGreaterThan(9_000);
    expect(context.left).toBeLessThanOrEqual(10_000);
  });
});

describe("readiness", () => {
  it("reports NOT_SERVING until what it waits for (its consumers joined) holds, then SERVING", async () => {
    let join: () => void = () => undefined;
    const joined = new Promise<void>((resolve) => (join = resolve));
    const waiting = await startGrpcServer({
      name: "kit-ready-test",
      port: 0,
      log: createLogger("kit-ready-test", { level: "silent" }),
      services: [served(AnalyticsService, {})],
      ready: [joined],
    });
    try {
      const health = createClient(Health, createGrpcTransport({ baseUrl: waiting.url }));
      expect((await health.check({})).status).toBe(Status.NOT_SERVING);
      join();
      await eventually(
        async () => ((await health.check({})).status === Status.SERVING ? true : undefined),
        5_000,
        "SERVING once the consumers joined",
      );
    } finally {
      await waiting.close();
    }
  });
});
