// The messaging benchmark (`npm run bench:messaging`). Not a test: it measures and prints.
//
// 1. Import: a CSV of --rows rows (default 100,000; names, national phones, e-mails, tags,
//    a few invalid phones and duplicates) goes through POST /v1/imports; it prints the time
//    from the request to `completed` and rows/s. Target: 100,000 rows in under 60 s.
// 2. Search: the contacts table is filled to --contacts contacts (default 1,000,000, by SQL),
//    then --queries searches (default 200 of each kind) through GET /v1/contacts: by phone
//    prefix and by name. Prints p50/p95. Target: p95 <= 100 ms.
// Reference, same run: GET /v1/health through the same gateway (p50/p95: the HTTP floor on
// this machine) and PostgreSQL alone inserting --rows rows with one INSERT ... SELECT
// (rows/s: the database floor).
//
// It runs the whole system in this process (deploy/local/system.ts, in-process bus) on a
// fresh database of the PostgreSQL at BENCH_DATABASE_ADMIN_URL (default
// postgres://postgres@127.0.0.1:5432/postgres), dropped at the end unless --keep-db.
//
//   npm run bench:messaging -- --rows 5000 --contacts 50000 --queries 50   (small: shared machines)

import { parseArgs } from "node:util";
import pg from "pg";
import { startSystem } from "../../deploy/local/system.ts";
import { createDatabase } from "../infra/postgres.ts";

const { values: flags } = parseArgs({
  options: {
    rows: { type: "string" },
    contacts: { type: "string" },
    queries: { type: "string" },
    "keep-db": { type: "boolean", default: false },
  },
});
const ROWS = Number(flags.rows ?? process.env.BENCH_ROWS ?? 100_000);
const CONTACTS = Number(flags.contacts ?? process.env.BENCH_CONTACTS ?? 1_000_000);
const QUERIES = Number(flags.queries ?? process.env.BENCH_QUERIES ?? 200);
const ADMIN_DB = process.env.BENCH_DATABASE_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const KEY = "bench-messaging-key-0123456789";

const FIRST = ["Aïcha", "Jean", "Marie", "Paul", "Estelle", "Ibrahim", "Clarisse", "Serge", "Fadimatou", "Rodrigue"];
const LAST = ["Nkomo", "Mbarga", "Fotso", "Ngo Bassa", "Tchoua", "Abena", "Eto'o", "Kamga", "Bello", "Ndongo"];

function percentile(sorted: number[], p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : NaN;
}

function csvOf(rows: number): string {
  const lines = ["Nom;Téléphone;Email;Tags"];
  for (let i = 0; i < rows; i++) {
    const phone = i % 97 === 0 ? "12 34" : `6${String(50_000_000 + (i % Math.max(1, rows - 50))).padStart(8, "0")}`;
    lines.push(`${FIRST[i % 10]} ${LAST[(i * 7) % 10]};${phone};user${i}@example.cm;"client;lot ${i % 5}"`);
  }
  return lines.join("\r\n") + "\r\n";
}

async function timed(n: number, call: (i: number) => Promise<void>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await call(i);
    out.push(performance.now() - t);
  }
  return out.sort((a, b) => a - b);
}

const db = await createDatabase(ADMIN_DB, "tops_bench_messaging");
const pool = new pg.Pool({ connectionString: db.url, max: 2 });
const system = await startSystem({
  env: {
    ...process.env,
    NODE_ENV: "development",
    DATABASE_URL: db.url,
    KAFKA_BROKERS: "",
    API_KEYS: KEY,
    LOG_LEVEL: "warn",
    RATE_LIMIT_RPS: "100000",
    RATE_LIMIT_BURST: "100000",
    IMPORT_POLL_MS: "200",
  },
  randomPorts: true,
});
const url = system.gatewayUrl;
const headers = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };
const get = async (path: string) => {
  const r = await fetch(url + path, { headers });
  if (r.status !== 200) throw new Error(`${path}: ${r.status} ${await r.text()}`);
  return r.json();
};

try {
  // --- Reference: the HTTP floor and the database floor -------------------------------
  const health = await timed(QUERIES, async () => void (await (await fetch(`${url}/v1/health`)).text()));
  await pool.query(`create table bench_reference (id bigserial primary key, name text, phone text)`);
  let t = performance.now();
  await pool.query(
    `insert into bench_reference (name, phone) select 'name ' || g, '+2376' || lpad(g::text, 8, '0') from generate_series(1, $1) g`,
    [ROWS],
  );
  const sqlRowsPerS = ROWS / ((performance.now() - t) / 1000);

  // --- Import --------------------------------------------------------------------------
  const body = JSON.stringify({
    file: { name: "bench.csv", content: csvOf(ROWS) },
    mapping: { template: "spreadsheet" },
  });
  t = performance.now();
  const created = await fetch(`${url}/v1/imports`, {
    method: "POST",
    headers,
    body: body.replace(
      '"template":"spreadsheet"',
      '"columns":' +
        JSON.stringify([
          { column: "Nom", target: "full_name", transform: "split_full_name" },
          { column: "Téléphone", target: "phone" },
          { column: "Email", target: "email" },
          { column: "Tags", target: "tags" },
        ]),
    ),
  });
  if (created.status !== 202) throw new Error(`import: ${created.status} ${await created.text()}`);
  const { import_id } = (await created.json()) as { import_id: string };
  let imp: { state: string; progress: Record<string, number> };
  // When the import's progress first reached each tenth of its rows: a row's cost that grows
  // with the import's size shows as a falling rate from one tenth to the next.
  const tenths: { rows: number; s: number }[] = [{ rows: 0, s: 0 }];
  for (;;) {
    imp = (await get(`/v1/imports/${import_id}?errors_limit=1`)) as typeof imp;
    const processed = imp.progress.processed ?? 0;
    if (processed >= (ROWS * tenths.length) / 10) tenths.push({ rows: processed, s: (performance.now() - t) / 1000 });
    if (imp.state === "completed" || imp.state === "failed") break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const importS = (performance.now() - t) / 1000;
  const tenthRates = tenths
    .slice(1)
    .map((p, i) => Math.round((p.rows - tenths[i].rows) / Math.max(0.001, p.s - tenths[i].s)));

  // --- Search over CONTACTS contacts --------------------------------------------------
  const have = Number((await pool.query(`select count(*) from messaging.contacts`)).rows[0].count);
  t = performance.now();
  if (CONTACTS > have) {
    await pool.query(
      `insert into messaging.contacts (customer_id, first_name, last_name, phone, email)
       select gen_random_uuid(), (array['Aïcha','Jean','Marie','Paul','Estelle','Ibrahim','Clarisse','Serge'])[1 + g % 8] || g,
              (array['Nkomo','Mbarga','Fotso','Tchoua','Abena','Kamga','Bello','Ndongo'])[1 + (g / 8) % 8],
              '+2376' || lpad((g + 60000000)::text, 8, '0'), 's' || g || '@example.cm'
         from generate_series(1, $1) g`,
      [CONTACTS - have],
    );
  }
  await pool.query(`analyze messaging.contacts`);
  const seedS = (performance.now() - t) / 1000;
  const byPhone = await timed(QUERIES, async (i) => {
    // 5 to 7 digits of a national number: prefixes that match from thousands to a few rows.
    const prefix = `6${String(60000000 + ((i * 7919) % CONTACTS)).slice(0, 4 + (i % 3))}`;
    await get(`/v1/contacts?search=${prefix}&limit=50`);
  });
  const byName = await timed(QUERIES, async (i) => {
    const name = `${FIRST[i % 8].toLowerCase()}${(i * 104729) % CONTACTS}`;
    await get(`/v1/contacts?search=${encodeURIComponent(name)}&limit=50`);
  });
  const byCommonName = await timed(QUERIES, async (i) => {
    await get(`/v1/contacts?search=${encodeURIComponent(LAST[i % 8].toLowerCase())}&limit=50`);
  });

  const ms = (v: number) => Number(v.toFixed(1));
  const summary = {
    import_rows: ROWS,
    import_state: imp!.state,
    import_progress: imp!.progress,
    import_s: Number(importS.toFixed(2)),
    import_rows_per_s: Math.round(ROWS / importS),
    import_rows_per_s_by_tenth: tenthRates,
    reference_sql_insert_rows_per_s: Math.round(sqlRowsPerS),
    contacts: Math.max(CONTACTS, have),
    seed_s: Number(seedS.toFixed(1)),
    search_phone_prefix_p50_ms: ms(percentile(byPhone, 50)),
    search_phone_prefix_p95_ms: ms(percentile(byPhone, 95)),
    search_name_p50_ms: ms(percentile(byName, 50)),
    search_name_p95_ms: ms(percentile(byName, 95)),
    search_common_name_p50_ms: ms(percentile(byCommonName, 50)),
    search_common_name_p95_ms: ms(percentile(byCommonName, 95)),
    reference_health_p50_ms: ms(percentile(health, 50)),
    reference_health_p95_ms: ms(percentile(health, 95)),
  };
  console.log(JSON.stringify(summary));
  console.log(
    [
      `import          ${ROWS} rows in ${summary.import_s} s = ${summary.import_rows_per_s} rows/s (${imp!.state}; target: 100,000 rows < 60 s)`,
      `  by tenth      ${tenthRates.join(", ")} rows/s (flat: a row costs the same at any size)`,
      `reference       PostgreSQL alone: ${summary.reference_sql_insert_rows_per_s} rows/s (INSERT ... SELECT)`,
      `search (${summary.contacts} contacts, ${QUERIES} queries each; target p95 <= 100 ms)`,
      `  phone prefix  p50 ${summary.search_phone_prefix_p50_ms} ms, p95 ${summary.search_phone_prefix_p95_ms} ms`,
      `  name          p50 ${summary.search_name_p50_ms} ms, p95 ${summary.search_name_p95_ms} ms`,
      `  common name   p50 ${summary.search_common_name_p50_ms} ms, p95 ${summary.search_common_name_p95_ms} ms`,
      `reference       GET /v1/health p50 ${summary.reference_health_p50_ms} ms, p95 ${summary.reference_health_p95_ms} ms`,
    ].join("\n"),
  );
} finally {
  await system.stop();
  await pool.end();
  if (!flags["keep-db"]) await db.drop();
}
