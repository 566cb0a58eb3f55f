// The write-path benchmark (`npm run bench`, after the poll benchmark). Not a test: it
// measures and prints, each figure beside a reference measured in the same run.
//
//   1. references: a bare express hello-world saturated with the same client, and
//      `pgbench -S` (select-only) on the same PostgreSQL;
//   2. the create burst: IDS request_ids each sent REPEATS times at once (default 310 × 5),
//      p50/p99, and exactly one operation per request_id;
//   3. creations/s with 10 % replays (closed loop, CONCURRENCY callers);
//   4. claims/s: QUEUED operations queued over the handsets, then drained by the handsets
//      polling and reporting as fast as they can (cooldown 0).
//
//   npm run bench:throughput -- --ids 310 --repeats 5 --queued 2000 --duration-s 5
//   (the issue's full size is --queued 20000)

import { execFileSync, type ChildProcess } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { createWriteStream } from "node:fs";
import { parseArgs } from "node:util";
import pg from "pg";
import { OperatorSms } from "../simulator/operator-sms.ts";
import { SimulatedHandset } from "../simulator/handset.ts";
import { SimulatedOperator } from "../simulator/operator.ts";
import { call, closeConnections, percentile, pool, saturate, setConnections, startChild } from "./http.ts";

const { values: flags } = parseArgs({
  options: {
    ids: { type: "string" },
    repeats: { type: "string" },
    queued: { type: "string" },
    handsets: { type: "string" },
    "duration-s": { type: "string" },
    concurrency: { type: "string" },
    "sms-per-s": { type: "string" },
    "sms-s": { type: "string" },
    phases: { type: "string" },
  },
});
// --phases burst,rate,claims,sms runs only those (the references always run).
const PHASES = new Set((flags.phases ?? "burst,rate,claims,sms").split(","));
const IDS = Number(flags.ids ?? 310);
const REPEATS = Number(flags.repeats ?? 5);
const QUEUED = Number(flags.queued ?? 2000);
const HANDSETS = Number(flags.handsets ?? 20);
const DURATION_S = Number(flags["duration-s"] ?? 5);
const CONCURRENCY = Number(flags.concurrency ?? 32);
const SMS_PER_S = Number(flags["sms-per-s"] ?? 50);
const SMS_S = Number(flags["sms-s"] ?? 10);
const PIN = "52918374";
const ADMIN_DB = process.env.BENCH_DATABASE_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const API_KEY = `bench-${randomBytes(8).toString("hex")}`;
const BOOTSTRAP = `bench-${randomBytes(8).toString("hex")}`;
const log = (s: string) => process.stdout.write(`${s}\n`);
const ms = (v: number) => `${v.toFixed(1)} ms`;

setConnections(Math.max(256, IDS * REPEATS));

function pgbench(url: string): string {
  try {
    execFileSync("pgbench", ["-i", "-s", "1", "-q", url], { stdio: "ignore" });
    // pgbench's tables stay in the benchmark's own database, dropped at the end.
    const out = execFileSync("pgbench", ["-S", "-c", "4", "-j", "2", "-T", String(DURATION_S), url], {
      stdio: ["ignore", "pipe", "ignore"],
    }).toString();
    const tps = /tps = ([\d.]+)/.exec(out)?.[1];
    return tps ? `${Number(tps).toFixed(0)} select-only tx/s (4 clients)` : "no figure";
  } catch (err) {
    return `unavailable (${(err as Error).message.split("\n")[0]})`;
  }
}

async function main(): Promise<void> {
  const children: ChildProcess[] = [];
  const admin = new pg.Client({ connectionString: ADMIN_DB });
  await admin.connect();
  const dbName = `bench_tp_${Date.now().toString(36)}`;
  await admin.query(`create database ${dbName}`);
  const dbUrl = new URL(ADMIN_DB);
  dbUrl.pathname = `/${dbName}`;
  try {
    const hello = await startChild("hello.ts", {});
    children.push(hello.child);
    const ref = await saturate(DURATION_S, 64, () => call(hello.line.url, "GET", "/"));
    log(`reference: express hello-world ${ref.rps.toFixed(0)} req/s (p50 ${ms(ref.p50)}, p99 ${ms(ref.p99)})`);
    log(`reference: pgbench on the same PostgreSQL: ${pgbench(dbUrl.toString())}`);

    const system = await startChild("system.ts", {
      NODE_ENV: "development",
      LOG_LEVEL: "warn",
      DATABASE_URL: dbUrl.toString(),
      API_KEYS: API_KEY,
      BOOTSTRAP_TOKEN: BOOTSTRAP,
      RATE_LIMIT_RPS: "1000000",
      RATE_LIMIT_BURST: "1000000",
      DEVICE_COOLDOWN_S: "0",
    });
    children.push(system.child);
    // BENCH_SYSTEM_LOG=<file>: the system's stderr (its logs) also goes there.
    if (process.env.BENCH_SYSTEM_LOG) system.child.stderr!.pipe(createWriteStream(process.env.BENCH_SYSTEM_LOG));
    const base: string = system.line.gatewayUrl;
    const key = { "x-api-key": API_KEY };
    await call(
      base,
      "POST",
      "/v1/agents/bootstrap",
      { "x-bootstrap-token": BOOTSTRAP },
      {
        login: "bench",
        full_name: "Bench Admin",
        password: "bench-password-1",
      },
    );
    const login = await call(base, "POST", "/v1/agents/login", {}, { login: "bench", password: "bench-password-1" });
    const auth = { authorization: `Bearer ${login.body.token}` };
    const agentId: string = (
      await call(base, "POST", "/v1/agents/admin", auth, {
        login: "bench-agent",
        full_name: "Bench Agent",
        password: "bench-password-1",
      })
    ).body.agent_id;
    const devices: { token: string; simId: string; msisdn: string }[] = [];
    await pool(
      Array.from({ length: HANDSETS }, (_, i) => i),
      8,
      async (i) => {
        const d = await call(base, "POST", "/v1/devices", auth, { label: `tp ${i}` });
        const sim = await call(base, "POST", "/v1/sims", auth, {
          operator: "operator_b",
          msisdn: `69${String(2_000_000 + i).padStart(7, "0")}`,
          pin: PIN,
          device_id: d.body.device_id,
          subscription_slot: "0",
        });
        await call(base, "PATCH", `/v1/sims/${sim.body.sim_id}/balance`, key, { balance: 1_000_000_000_000 });
        devices.push({
          token: d.body.device_token,
          simId: sim.body.sim_id,
          msisdn: `69${String(2_000_000 + i).padStart(7, "0")}`,
        });
      },
    );
    await call(base, "PATCH", `/v1/admin/agents/${agentId}/access`, auth, {
      allowed_sim_ids: devices.map((d) => d.simId),
      allowed_op_types: ["deposit"],
      max_amount: 500_000,
    });
    const body = (requestId: string, montant = 1000, msisdn = "690000001") => ({
      request_id: requestId,
      agent_id: agentId,
      operator: "operator_b",
      montant,
      client: { msisdn, nom: "Bench" },
    });
    const create = (requestId: string, montant?: number, msisdn?: string) =>
      call(base, "POST", "/v1/operations", key, body(requestId, montant, msisdn));

    // Fleet's view of the new agent and SIMs reaches dispatch asynchronously: wait for it.
    for (const until = performance.now() + 60_000; ;) {
      const r = await create(`warmup-${randomUUID()}`);
      if (r.status >= 200 && r.status < 300) break;
      if (performance.now() > until) throw new Error(`creation never succeeded: ${r.status} ${JSON.stringify(r.body)}`);
      await new Promise((res) => setTimeout(res, 500));
    }

    const check = new pg.Client({ connectionString: dbUrl.toString() });
    await check.connect();
    if (PHASES.has("burst")) {
      // 2. The burst.
      const ids = Array.from({ length: IDS }, () => `burst-${randomUUID()}`);
      const burst = await Promise.all(ids.flatMap((id) => Array.from({ length: REPEATS }, () => create(id))));
      const lat = burst.map((r) => r.ms).sort((a, b) => a - b);
      const created = burst.filter((r) => r.status >= 200 && r.status < 300).length;
      const replayed = burst.filter((r) => r.status === 409).length;
      const others = burst.length - created - replayed;
      const statuses: Record<string, number> = {};
      for (const r of burst) statuses[r.status] = (statuses[r.status] ?? 0) + 1;
      const sample = burst.find((r) => r.status >= 300 && r.status !== 409);
      const stored = Number(
        (await check.query(`select count(*) as n from dispatch.operations where request_id like 'burst-%'`)).rows[0].n,
      );
      log(
        `create burst: ${IDS} ids × ${REPEATS} at once: p50 ${ms(percentile(lat, 50))}, p99 ${ms(percentile(lat, 99))}, max ${ms(lat.at(-1) ?? NaN)}; ${created} created, ${replayed} replays answered 409, ${others} other; ${stored} operations stored (goal: p99 <= 1000 ms, ${IDS} stored)`,
      );
      log(
        `  answers by status ${JSON.stringify(statuses)}${sample ? `; e.g. ${JSON.stringify(sample.body).slice(0, 200)}` : ""}`,
      );
    }
    if (PHASES.has("rate")) {
      // 3. Creations/s with 10 % replays.
      const recent: string[] = [];
      const rate = await saturate(DURATION_S, CONCURRENCY, (i) => {
        const replay = recent.length > 0 && i % 10 === 0;
        const id = replay ? recent[Math.floor(Math.random() * recent.length)] : `rate-${randomUUID()}`;
        if (!replay) recent.push(id);
        return create(id);
      });
      log(
        `creations: ${rate.rps.toFixed(0)} req/s with 10 % replays (${CONCURRENCY} callers; p50 ${ms(rate.p50)}, p99 ${ms(rate.p99)}; ${rate.errors} answers other than 2xx, replays' 409 included)`,
      );
    }
    if (PHASES.has("claims")) {
      // 4. Claims/s draining the queue.
      const queuedBefore = Number(
        (await check.query(`select count(*) as n from dispatch.operations where status = 'queued'`)).rows[0].n,
      );
      const toQueue = Math.max(0, QUEUED - queuedBefore);
      await pool(
        Array.from({ length: toQueue }, (_, i) => i),
        CONCURRENCY,
        async () => void (await create(`drain-${randomUUID()}`)),
      );
      const queued = Number(
        (await check.query(`select count(*) as n from dispatch.operations where status = 'queued'`)).rows[0].n,
      );
      const started = performance.now();
      let claims = 0;
      await Promise.all(
        devices.map(async (d) => {
          const headers = { authorization: `Bearer ${d.token}` };
          for (;;) {
            const r = await call(base, "GET", "/v1/device/next", headers);
            if (r.status === 204) break;
            if (r.status !== 200) continue;
            claims++;
            await call(base, "POST", "/v1/device/outcome", headers, {
              operation_id: r.body.operation_id,
              outcome: "ussd_ok",
              ussd_response: "ok",
              executed_at: new Date().toISOString(),
            });
          }
        }),
      );
      const drainS = (performance.now() - started) / 1000;
      log(
        `claims: ${(claims / drainS).toFixed(0)} claims/s draining ${queued} queued operations over ${HANDSETS} handsets (each claim followed by its outcome; goal >= 300/s at 20000)`,
      );
    }
    if (PHASES.has("sms")) {
      // 5. SMS to confirmation: SMS_PER_S deposits a second, dialled by simulated handsets,
      //    each proven by the operator's SMS forwarded by the handset; measured from the SMS
      //    leaving the handset to the operation being confirmed.
      const operator = new SimulatedOperator();
      operator.registerCustomer("690000001", "Bench", 0);
      const smsSentAt = new Map<string, number>();
      const confirmedIn: number[] = [];
      const smsSenders: OperatorSms[] = [];
      const handsets = devices.map((d) => {
        operator.registerSim(d.msisdn, "operator_b", { pin: PIN, balance: 1_000_000_000_000 });
        const sms = new OperatorSms({ baseUrl: base, token: d.token });
        smsSenders.push(sms);
        return new SimulatedHandset({
          baseUrl: base,
          token: d.token,
          operator,
          sims: new Map([[d.simId, { msisdn: d.msisdn, operator: "operator_b" }]]),
          onDialled: async (op, result) => {
            smsSentAt.set(op.operation_id, performance.now());
            await sms.onDialled(op, result);
          },
        });
      });
      let feeding = true;
      let smsCreated = 0;
      let feedEnded = Number.POSITIVE_INFINITY;
      const settling = () => feeding || performance.now() - feedEnded < 30_000;
      const dialling = handsets.map(async (h) => {
        while (settling() && (feeding || smsSentAt.size < smsCreated)) {
          const r = await h.pollOnce().catch(() => ({ status: 0 }));
          if (r.status !== 200) await new Promise((res) => setTimeout(res, 100));
        }
      });
      const watcher = (async () => {
        const seen = new Set<string>();
        while (settling() && (feeding || seen.size < smsCreated)) {
          const pending = [...smsSentAt.keys()].filter((id) => !seen.has(id));
          if (pending.length) {
            const rows = (
              await check.query(
                `select operation_id from dispatch.operations where operation_id = any($1) and status = 'confirmed'`,
                [pending],
              )
            ).rows as { operation_id: string }[];
            const now = performance.now();
            for (const r of rows) {
              seen.add(r.operation_id);
              confirmedIn.push(now - smsSentAt.get(r.operation_id)!);
            }
          }
          await new Promise((res) => setTimeout(res, 25));
        }
      })();
      const feedStarted = performance.now();
      for (let k = 0; k < SMS_PER_S * SMS_S; k++) {
        const due = feedStarted + (k * 1000) / SMS_PER_S - performance.now();
        if (due > 0) await new Promise((res) => setTimeout(res, due));
        // A distinct amount and recipient each: the SMS must prove one operation, not be ambiguous.
        const msisdn = `69${String(5_000_000 + k).padStart(7, "0")}`;
        operator.registerCustomer(msisdn, "Bench", 0);
        void create(`sms-${randomUUID()}`, 1000 + k, msisdn).then((r) => {
          if (r.status >= 200 && r.status < 300) smsCreated++;
        });
      }
      feeding = false;
      feedEnded = performance.now();
      await watcher;
      await Promise.all(dialling);
      confirmedIn.sort((a, b) => a - b);
      log(
        `SMS to confirmation at ${SMS_PER_S} SMS/s for ${SMS_S} s: p50 ${ms(percentile(confirmedIn, 50))}, p99 ${ms(percentile(confirmedIn, 99))}; ${confirmedIn.length} of ${smsSentAt.size} SMS-proven operations confirmed (goal p99 <= 2000 ms)`,
      );
      const delivered = smsSenders.flatMap((x) => x.deliveries);
      const answers: Record<string, number> = {};
      for (const d of delivered) answers[String(d.status)] = (answers[String(d.status)] ?? 0) + 1;
      log(
        `  SMS forwarded: ${delivered.length}, answers ${JSON.stringify(answers)}${delivered[0] ? `; e.g. answer ${JSON.stringify(delivered[0].body).slice(0, 400)}` : ""}`,
      );
    }
    await check.end();
  } finally {
    for (const c of children) c.kill("SIGTERM");
    closeConnections();
    await new Promise((r) => setTimeout(r, 1500));
    await admin.query(`drop database if exists ${dbName} with (force)`).catch(() => undefined);
    await admin.end();
  }
}

await main();
