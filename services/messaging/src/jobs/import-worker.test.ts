import { Code, ConnectError } from "@connectrpc/connect";
import { createLogger, MemoryBus, openDatabase, rows, serviceClient } from "@transferops/kit";
import { MessagingService } from "@transferops/kit/gen/transferops/messaging/v1/messaging_service_pb";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../../../test/infra/context.ts";
import { eventually } from "../../../../test/support/eventually.ts";
import { startMessaging } from "../app.ts";
import { loadMessagingConfig } from "../config.ts";
import { insertImport } from "../store/imports.ts";
import { migrations } from "../store/migrations/index.ts";
import { ImportWorker } from "./import-worker.ts";

let db: TestDatabase;
let pool: pg.Pool;
const log = createLogger("messaging", { level: "silent" });
const caller = { kind: "messaging_key" };

beforeAll(async () => {
  db = await freshDatabase();
  pool = new pg.Pool({ connectionString: db.url, max: 2 });
  pool.on("error", () => undefined);
});
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

const start = (afterImportBatch?: (id: string, processed: number) => Promise<void>, pollMs = 60000) =>
  startMessaging({
    config: loadMessagingConfig({
      NODE_ENV: "test",
      DATABASE_URL: db.url,
      IMPORT_BATCH_ROWS: "2",
      IMPORT_POLL_MS: String(pollMs),
    }),
    port: 0,
    bus: new MemoryBus(),
    log,
    agents: { unknownAgents: async () => [] },
    afterImportBatch,
  });

const row = async (id: string) =>
  (await pool.query(`select state, processed, created, failed from messaging.imports where import_id = $1`, [id]))
    .rows[0];

describe("the service's own checks", () => {
  it("refuses a caller that is not a messaging key, whatever the gateway let through", async () => {
    const service = await start();
    try {
      const client = serviceClient(MessagingService, service.url);
      const err = await client.listContacts({ caller: { kind: "api_key" } }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConnectError);
      expect((err as ConnectError).code).toBe(Code.PermissionDenied);
      expect((err as ConnectError).rawMessage).toBe("The messaging routes take a messaging API key");
    } finally {
      await service.stop();
    }
  });
});

describe("import worker", () => {
  it("resumes an import after a restart from the last committed batch, writing each row once", async () => {
    let stopped = false;
    const first = await start(async () => {
      // The service dies after its first committed batch.
      stopped = true;
      throw new Error("crash after the first batch");
    });
    const client = serviceClient(MessagingService, first.url);
    const lines = [
      "Name,Phone",
      "A One,699100001",
      "B Two,699100002",
      "C Bad,12",
      "D Four,699100004",
      "E Five,699100005",
    ];
    const res = await client.createImport({
      caller,
      content: new TextEncoder().encode(lines.join("\n")),
      template: "spreadsheet",
      duplicatePolicy: "skip",
    });
    const id = res.import!.importId;
    await eventually(() => (stopped ? true : undefined));
    await first.stop();
    expect(await row(id)).toEqual({ state: "running", processed: 2, created: 2, failed: 0 });

    const second = await start();
    try {
      const done = await eventually(async () => {
        const r = await row(id);
        return r.state === "completed" ? r : undefined;
      });
      expect(done).toEqual({ state: "completed", processed: 5, created: 4, failed: 1 });
      const contacts = await pool.query(`select phone from messaging.contacts order by phone`);
      expect(contacts.rows.map((r) => r.phone)).toEqual([
        "+237699100001",
        "+237699100002",
        "+237699100004",
        "+237699100005",
      ]);
      const errors = await pool.query(`select line, reason from messaging.import_errors where import_id = $1`, [id]);
      expect(errors.rows).toEqual([{ line: 4, reason: "invalid_phone" }]);
    } finally {
      await second.stop();
    }
  });

  it("fails an import whose passes keep failing after 5 of them, keeping the batches committed", async () => {
    const service = await start(async () => {
      throw new Error("every pass fails after its first batch");
    }, 50);
    try {
      const client = serviceClient(MessagingService, service.url);
      const rows = Array.from({ length: 20 }, (_, i) => `Row ${i},6992${String(i).padStart(5, "0")}`);
      const res = await client.createImport({
        caller,
        content: new TextEncoder().encode(["Name,Phone", ...rows].join("\n")),
        template: "spreadsheet",
        duplicatePolicy: "skip",
      });
      const id = res.import!.importId;
      const done = await eventually(async () => {
        const r = await row(id);
        return r.state === "failed" ? r : undefined;
      });
      expect(done).toEqual({ state: "failed", processed: 10, created: 10, failed: 0 });
      const reason = await pool.query(`select failure_reason from messaging.imports where import_id = $1`, [id]);
      expect(reason.rows[0].failure_reason).toBe("import_error");
    } finally {
      await service.stop();
    }
  });

  it("plans every batch's statements for its rows, never with a plan kept from an emptier table", async () => {
    // One connection: the worker's prepared statements are the ones this test then reads.
    const one = await openDatabase({ url: db.url, schema: "messaging", migrations, poolMax: 1 });
    const worker = new ImportWorker({
      db: one,
      log,
      pollMs: 60000,
      batchRows: 2,
      leaseS: 60,
      stages: loadMessagingConfig({ NODE_ENV: "test", DATABASE_URL: db.url }).lifecycleStages,
      published: () => undefined,
    });
    try {
      const lines = Array.from(
        { length: 30 },
        (_, i) => `Plan ${i},6993${String(i).padStart(5, "0")},p${i}@example.cm`,
      );
      const imp = await one.tx((em) =>
        insertImport(em, {
          file_name: null,
          content: new TextEncoder().encode(["Name,Phone,Email", ...lines].join("\n")),
          charset: "auto",
          delimiter: "auto",
          mapping_id: null,
          template: null,
          columns: [
            { column: "Name", target: "full_name", transform: "split_full_name" },
            { column: "Phone", target: "phone" },
            { column: "Email", target: "email" },
          ],
          duplicate_policy: "update",
        }),
      );
      await worker.drain();
      expect(await row(imp.import_id)).toEqual({ state: "completed", processed: 30, created: 30, failed: 0 });
      // PostgreSQL switches a prepared statement to its generic plan from the sixth execution
      // when that plan looks no dearer: the lookup of a batch's phones ran 15 times here.
      const plans = await one.tx((em) =>
        rows<{ generic_plans: string; custom_plans: string }>(
          em,
          `select generic_plans, custom_plans from pg_prepared_statements where statement like '%for update of c'`,
        ),
      );
      expect(plans.map((p) => [Number(p.generic_plans), Number(p.custom_plans)])).toEqual([[0, 15]]);
    } finally {
      await worker.stop();
      await one.close();
    }
  });
});
