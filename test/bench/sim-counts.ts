// Contention on one SIM's counts row (dispatch Migration0011SimCounts): concurrent transactions
// that each move an operation between counted statuses, all on one SIM (every commit writes the
// same row) against the same on as many SIMs as clients (no shared row), and with the counting
// triggers off (what the row costs at all). Each transaction is the operation's update alone, so
// the row's share of it is as large as it can be: a real transition carries more statements.
//
//   npx tsx test/bench/sim-counts.ts <database url of a migrated dispatch schema> [--clients 8] [--tx 200]
//
// Writes its own operations (request_id `counts-bench-*`) and deletes them at the end.
import { randomUUID } from "node:crypto";
import { parseArgs } from "node:util";
import pg from "pg";

const { values: flags, positionals } = parseArgs({
  allowPositionals: true,
  options: { clients: { type: "string" }, tx: { type: "string" } },
});
const url = positionals[0];
if (!url) throw new Error("usage: sim-counts.ts <database url> [--clients 8] [--tx 200]");
const CLIENTS = Number(flags.clients ?? 8);
const TX = Number(flags.tx ?? 200);

const admin = new pg.Client({ connectionString: url });
await admin.connect();

async function operations(sims: string[]): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < CLIENTS; i++) {
    const id = randomUUID();
    await admin.query(
      `insert into dispatch.operations (operation_id, request_id, status, origin, op_type, agent_id, operator, montant,
         msisdn_dest, sim_id, created_at, updated_at)
       values ($1, $4, 'confirmed', 'aggregated', 'deposit', $2, 'operator_b', 1000, '690000001', $3,
         now(), now())`,
      [id, randomUUID(), sims[i % sims.length], `counts-bench-${id}`],
    );
    ids.push(id);
  }
  return ids;
}

/** CLIENTS connections, each flipping its own operation TX times, one transaction each. */
async function run(ids: string[]): Promise<{ txPerS: number; p50: number; p95: number }> {
  const clients = await Promise.all(
    ids.map(async () => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      return c;
    }),
  );
  const times: number[] = [];
  const started = performance.now();
  await Promise.all(
    clients.map(async (c, i) => {
      for (let k = 0; k < TX; k++) {
        const t = performance.now();
        await c.query(
          `update dispatch.operations set status = case when status = 'confirmed' then 'failed' else 'confirmed' end
            where operation_id = $1`,
          [ids[i]],
        );
        times.push(performance.now() - t);
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  await Promise.all(clients.map((c) => c.end()));
  times.sort((a, b) => a - b);
  const at = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))]!;
  return { txPerS: (CLIENTS * TX) / elapsed, p50: at(0.5), p95: at(0.95) };
}

const sims = Array.from({ length: CLIENTS + 1 }, () => randomUUID());
const oneSim = await operations(sims.slice(0, 1));
const ownSims = await operations(sims.slice(1));
const fmt = (r: { txPerS: number; p50: number; p95: number }) =>
  `${r.txPerS.toFixed(0)} tx/s, p50 ${r.p50.toFixed(2)} ms, p95 ${r.p95.toFixed(2)} ms`;
try {
  console.log(`${CLIENTS} clients × ${TX} transactions, each an operation's counted status change:`);
  for (let round = 1; round <= 2; round++) {
    console.log(`  round ${round}: one SIM (one shared row): ${fmt(await run(oneSim))}`);
    console.log(`  round ${round}: a SIM per client:         ${fmt(await run(ownSims))}`);
    await admin.query(`alter table dispatch.operations disable trigger sim_counts_update`);
    try {
      console.log(`  round ${round}: one SIM, triggers off:   ${fmt(await run(oneSim))}`);
    } finally {
      await admin.query(`alter table dispatch.operations enable trigger sim_counts_update`);
    }
  }
  const load = (await import("node:os")).loadavg().map((l) => l.toFixed(1));
  console.log(`load average ${load.join(" ")}`);
} finally {
  await admin.query(`delete from dispatch.operations where request_id like 'counts-bench-%'`);
  await admin.query(`delete from dispatch.sim_operation_counts where sim_id = any($1)`, [sims]);
  await admin.end();
}
