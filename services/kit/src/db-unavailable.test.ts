import { randomBytes } from "node:crypto";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../../test/infra/context.ts";
import { isDatabaseUnavailable, Migration, openDatabase, type Database } from "./db.ts";
import { whenSlotFree } from "./db-driver.ts";
import { createLogger } from "./log.ts";
import { served, startGrpcServer, type GrpcServer } from "./server.ts";
import { serviceClient } from "./client.ts";
import { AnalyticsService } from "./gen/transferops/analytics/v1/analytics_service_pb.ts";
import { Health, HealthCheckResponse_ServingStatus as HealthStatus } from "./gen/grpc/health/v1/health_pb.ts";
import { MemoryBus } from "./bus-memory.ts";
import { ServiceRuntime } from "./service.ts";
import { metricsRegistry } from "./metrics.ts";

// A database that refuses connections for now (every slot taken, as when replicas start
// together past max_connections) is waited for at start and answered as "unavailable, send
// it again" on a call, never a process exit or an internal error. A role with a connection
// limit of one plays the full server (a superuser ignores the limit).

class Migration0001Nothing extends Migration {
  override name = "Migration0001Nothing";
  up(): void {
    this.addSql(`create table unavailabletest.t (id int primary key)`);
  }
}

let tdb: TestDatabase;
let admin: pg.Client;
const role = `tops_limited_${randomBytes(4).toString("hex")}`;
let limitedUrl: string;
const opened: Database[] = [];

beforeAll(async () => {
  tdb = await freshDatabase();
  admin = new pg.Client({ connectionString: tdb.url });
  await admin.connect();
  await admin.query(`create role ${role} login connection limit 2`);
  const dbName = new URL(tdb.url).pathname.slice(1);
  await admin.query(`grant all on database "${dbName}" to ${role}`);
  const u = new URL(tdb.url);
  u.username = role;
  u.password = "";
  limitedUrl = u.toString();
});
afterAll(async () => {
  for (const db of opened) await db.close();
  await admin?.query(`drop owned by ${role}`).catch(() => {});
  await admin?.end();
  await tdb?.drop();
  const cleanup = new pg.Client({ connectionString: new URL("/postgres", tdb.url).toString() });
  await cleanup.connect();
  await cleanup.query(`drop role if exists ${role}`);
  await cleanup.end();
});

/** Holds the role's two connection slots until released. */
async function takeEverySlot(): Promise<{ end(): Promise<void> }> {
  const held = [new pg.Client({ connectionString: limitedUrl }), new pg.Client({ connectionString: limitedUrl })];
  for (const c of held) await c.connect();
  return { end: async () => void (await Promise.all(held.map((c) => c.end()))) };
}

describe("a database out of connection slots", () => {
  it("is recognised as unavailable for now, and a wrong statement is not", async () => {
    const holder = await takeEverySlot();
    const refused = await new pg.Client({ connectionString: limitedUrl }).connect().then(
      () => undefined,
      (err: unknown) => err,
    );
    await holder.end();
    expect((refused as { code?: string }).code).toBe("53300");
    expect(isDatabaseUnavailable(refused)).toBe(true);
    expect(isDatabaseUnavailable(new Error("wrapped", { cause: refused }))).toBe(true);

    const wrong = await admin.query("selec 1").then(
      () => undefined,
      (err: unknown) => err,
    );
    expect((wrong as { code?: string }).code).toBe("42601");
    expect(isDatabaseUnavailable(wrong)).toBe(false);
  });

  it("is recognised in a connection cut under a client, whose next query node-pg refuses without a code", async () => {
    // The simulation's database fault found it: a launch answered 500 where it must say 503.
    const client = new pg.Client({ connectionString: tdb.url });
    client.on("error", () => undefined);
    await client.connect();
    const { rows } = await client.query<{ pid: number }>("select pg_backend_pid() as pid");
    const cut = new Promise((resolve) => client.once("error", resolve));
    await admin.query("select pg_terminate_backend($1)", [rows[0].pid]);
    await cut;
    const next = await client.query("select 1").then(
      () => undefined,
      (err: unknown) => err,
    );
    await client.end().catch(() => undefined);
    expect((next as Error).message).toMatch(/not queryable/);
    expect(isDatabaseUnavailable(next)).toBe(true);
    expect(isDatabaseUnavailable(new Error("DriverException", { cause: next }))).toBe(true);
  });

  it("is waited for a moment on a new connection: a slot freed within the waits is taken, a longer refusal fails", async () => {
    const connect = async () => {
      const c = new pg.Client({ connectionString: limitedUrl });
      try {
        await c.connect();
      } catch (err) {
        await c.end().catch(() => {});
        throw err;
      }
      return c;
    };
    let holder = await takeEverySlot();
    setTimeout(() => void holder.end(), 300);
    const c = await whenSlotFree(connect);
    await c.end();

    holder = await takeEverySlot();
    try {
      await expect(whenSlotFree(connect)).rejects.toMatchObject({ code: "53300" });
    } finally {
      await holder.end();
    }
  });

  it("is waited for at start: the database opens once slots free, instead of the process exiting", async () => {
    const holder = await takeEverySlot();
    const retries: number[] = [];
    const log = createLogger("kit-test", { level: "silent" });
    const warn = log.warn.bind(log);
    log.warn = ((obj: { attempt?: number }, ...rest: unknown[]) => {
      if (typeof obj?.attempt === "number") retries.push(obj.attempt);
      return (warn as (...a: unknown[]) => void)(obj, ...rest);
    }) as typeof log.warn;
    const opening = openDatabase({
      log,
      url: limitedUrl,
      schema: "unavailabletest",
      migrations: [Migration0001Nothing],
      poolMax: 1,
      startWaitMs: 20_000,
    });
    await new Promise((r) => setTimeout(r, 1_500));
    await holder.end();
    const db = await opening;
    opened.push(db);
    expect(retries.length).toBeGreaterThan(0);
    expect(await db.em().execute(`select count(*)::int as n from unavailabletest.t`)).toEqual([{ n: 0 }]);
    await db.close();
    opened.pop();
  });

  it("gives up at start after its wait, with the database's own error", async () => {
    const holder = await takeEverySlot();
    try {
      await expect(
        openDatabase({
          url: limitedUrl,
          schema: "unavailabletest",
          migrations: [Migration0001Nothing],
          poolMax: 1,
          startWaitMs: 300,
        }),
      ).rejects.toMatchObject({ code: "53300" });
    } finally {
      await holder.end();
    }
  });

  describe("on a call", () => {
    let server: GrpcServer;
    beforeAll(async () => {
      server = await startGrpcServer({
        name: "kit-test",
        port: 0,
        log: createLogger("kit-test", { level: "silent" }),
        services: [
          served(AnalyticsService, {
            async listKnownAgents() {
              // A handler whose transaction cannot get a connection.
              const c = new pg.Client({ connectionString: limitedUrl });
              await c.connect();
              await c.end();
              return {};
            },
          }),
        ],
      });
    });
    afterAll(() => server?.close());

    // The kit's client (the Connect protocol, as the gateway and the services call) and gRPC.
    for (const [protocol, clientOf] of [
      ["the kit's client", (url: string) => serviceClient(AnalyticsService, url)],
      ["gRPC", (url: string) => createClient(AnalyticsService, createGrpcTransport({ baseUrl: url }))],
    ] as const) {
      it(`answers Unavailable (the gateway's 503 outcome_unknown), not Internal (${protocol})`, async () => {
        const client = clientOf(server.url);
        const holder = await takeEverySlot();
        try {
          const err = await client.listKnownAgents({}).then(
            () => undefined,
            (e: unknown) => e,
          );
          expect(err).toBeInstanceOf(ConnectError);
          expect((err as ConnectError).code).toBe(Code.Unavailable);
        } finally {
          await holder.end();
        }
        // With the slot free, the same call succeeds.
        await expect(client.listKnownAgents({})).resolves.toBeDefined();
      });
    }
  });
});

class Migration0001Ready extends Migration {
  override name = "Migration0001Ready";
  up(): void {
    this.addSql(`create table kitready.t (id int primary key)`);
  }
}

describe("readiness", () => {
  it("is NOT_SERVING while the pool cannot hand out a connection within its budget, SERVING once it can", async () => {
    const rt = await ServiceRuntime.open({
      name: "kitready",
      databaseUrl: tdb.url,
      migrations: [Migration0001Ready],
      poolMax: 1,
      bus: new MemoryBus(),
      log: createLogger("kit-test", { level: "silent" }),
      publishes: false,
    });
    const running = await rt.serve(0, [served(AnalyticsService, {})]);
    const health = createClient(Health, createGrpcTransport({ baseUrl: running.url }));
    let release: () => void = () => undefined;
    try {
      expect((await health.check({})).status).toBe(HealthStatus.SERVING);
      // The pool's one connection held by a transaction that does not end.
      const held = new Promise<void>((r) => (release = r));
      let holding: () => void = () => undefined;
      const taken = new Promise<void>((r) => (holding = r));
      const tx = rt.db.tx(async () => {
        holding();
        await held;
      });
      await taken;
      await new Promise((r) => setTimeout(r, 1_100)); // the last answer, SERVING, has aged out
      const started = Date.now();
      expect((await health.check({})).status).toBe(HealthStatus.NOT_SERVING);
      // Within its budget (DB_READY_TIMEOUT_MS, 1 s), before a probe's 2 s timeout.
      expect(Date.now() - started).toBeLessThan(2_000);
      expect((await health.check({ service: AnalyticsService.typeName })).status).toBe(HealthStatus.NOT_SERVING);
      release();
      await tx;
      await new Promise((r) => setTimeout(r, 1_100));
      expect((await health.check({})).status).toBe(HealthStatus.SERVING);
    } finally {
      release();
      await running.stop();
    }
  });
});

class Migration0001Pool extends Migration {
  override name = "Migration0001Pool";
  up(): void {
    this.addSql(`create table kitpool.t (id int primary key)`);
  }
}

describe("the pool's metrics", () => {
  it("show the connections in use of the pool's size, the calls waiting, and how long they waited", async () => {
    const db = await openDatabase({ url: tdb.url, schema: "kitpool", migrations: [Migration0001Pool], poolMax: 1 });
    opened.push(db);
    const series = async () => {
      const text = await metricsRegistry.metrics();
      const value = (name: string) => {
        const line = text.split("\n").find((l) => l.startsWith(`${name} `));
        return line === undefined ? undefined : Number(line.split(" ")[1]);
      };
      return {
        inUse: value('transferops_db_pool_connections{service="kitpool",state="in_use"}'),
        max: value('transferops_db_pool_connections{service="kitpool",state="max"}'),
        waiting: value('transferops_db_pool_connections{service="kitpool",state="waiting"}'),
        waits: value('transferops_db_pool_wait_seconds_count{service="kitpool"}') ?? 0,
        waited: value('transferops_db_pool_wait_seconds_sum{service="kitpool"}') ?? 0,
        slow: value('transferops_db_pool_wait_seconds_bucket{le="0.1",service="kitpool"}') ?? 0,
      };
    };
    await db.em().execute("select count(*) from kitpool.t where id = ?", [1]);
    const before = await series();
    let release: () => void = () => undefined;
    const held = new Promise<void>((r) => (release = r));
    let holding: () => void = () => undefined;
    const taken = new Promise<void>((r) => (holding = r));
    const tx = db.tx(async () => {
      holding();
      await held;
    });
    await taken;
    // A statement outside the transaction waits for the pool's one connection.
    const statement = db.em().execute("select count(*) from kitpool.t where id = ?", [1]);
    await new Promise((r) => setTimeout(r, 300));
    const during = await series();
    release();
    await Promise.all([tx, statement]);
    const after = await series();
    expect([during.inUse, during.max, during.waiting]).toEqual([1, 1, 1]);
    expect(after.waiting).toBe(0);
    // The transaction's wait and the statement's, the statement's at least the 300 ms it was held.
    expect(after.waits - before.waits).toBe(2);
    expect(after.waited - before.waited).toBeGreaterThanOrEqual(0.3);
    expect(after.waits - after.slow).toBeGreaterThanOrEqual(1);
    await db.close();
    opened.pop();
  });
});
