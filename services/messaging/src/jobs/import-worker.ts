import { randomUUID } from "node:crypto";
import { PeriodicJob, type Database, type Logger } from "@transferops/kit";
import { decodeFile, detectDelimiter, parseCsv, type CsvRecord, type Delimiter } from "../domain/csv.ts";
import { planRow, type DuplicatePolicy, type Known } from "../domain/import-plan.ts";
import { mapRow, resolveColumns, type Resolved, type RowError } from "../domain/mapping.ts";
import { contactsImported, importFinished } from "../events/imports.ts";
import { findKnown, insertContacts, planForTheseRows, updateContacts } from "../store/import-batch.ts";
import {
  addProgress,
  claimImport,
  countPassFailure,
  finishImport,
  holdImport,
  insertRowErrors,
  releaseImport,
  setParsed,
  type ImportRow,
} from "../store/imports.ts";
import { ensureTags } from "../store/tags.ts";

/** Passes of one import that may fail on an unexpected error before it is failed. */
const MAX_PASS_FAILURES = 5;

export interface ImportWorkerOptions {
  db: Database;
  log: Logger;
  pollMs: number;
  batchRows: number;
  leaseS: number;
  stages: readonly string[];
  published(): void;
  /** Called after each committed batch (tests stop the service there to prove resumption). */
  afterBatch?(importId: string, processed: number): Promise<void>;
}

/**
 * Runs imports in the background. A pass claims one import (queued, or running under an
 * expired lease), parses the whole file before writing anything (a malformed file fails
 * with nothing written), then commits batches of rows, each with its progress, so a
 * restarted service resumes after the last committed batch. A stopping worker releases its
 * lease so the next start resumes at once.
 */
export class ImportWorker {
  private readonly job: PeriodicJob;
  private stopping = false;

  constructor(private readonly o: ImportWorkerOptions) {
    this.job = new PeriodicJob("import worker", o.pollMs, () => this.drain(), o.log);
  }

  /** Starts polling, with a pass at once: imports a stopped service left are resumed on start. */
  start(): void {
    this.stopping = false;
    this.job.start();
    this.wake();
  }

  /** Wakes the worker (an import was queued): the next pass runs soon, never overlapping. */
  wake(): void {
    if (!this.waking && !this.stopping) {
      this.waking = setTimeout(() => {
        this.waking = undefined;
        this.running ??= this.drain().finally(() => (this.running = undefined));
      }, 0);
    }
  }
  private waking?: NodeJS.Timeout;
  private running?: Promise<void>;

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.waking) clearTimeout(this.waking);
    await this.job.stop();
    await this.running;
  }

  /** Runs claimed imports until none is left. */
  async drain(): Promise<void> {
    while (!this.stopping) {
      const claimed = await this.o.db.tx((em) => claimImport(em, this.o.leaseS));
      if (!claimed) return;
      try {
        await this.run(claimed);
      } catch (err) {
        const failures = await this.o.db.tx((em) => countPassFailure(em, claimed.import_id));
        this.o.log.warn({ err, import_id: claimed.import_id, failures }, "import pass failed; will resume");
        // An import that fails pass after pass ends as failed; the batches committed stay.
        if (failures >= MAX_PASS_FAILURES) {
          await this.fail(claimed.import_id, "import_error", "The import failed repeatedly on an internal error");
        }
        return;
      }
    }
  }

  private async run(imp: ImportRow & { content: Buffer }): Promise<void> {
    const decoded = decodeFile(new Uint8Array(imp.content), imp.charset_requested as "auto");
    if (!decoded.ok) return this.fail(imp.import_id, decoded.reason, decoded.detail);
    const delimiter = (
      imp.delimiter_requested === "auto" ? detectDelimiter(decoded.text) : imp.delimiter_requested
    ) as Delimiter;
    const parsed = parseCsv(decoded.text, delimiter);
    if (!parsed.ok) return this.fail(imp.import_id, parsed.reason, parsed.detail);
    const resolved = resolveColumns(parsed.header, imp.columns);
    if (!resolved.length) {
      return this.fail(imp.import_id, "no_mapped_column", "No column of the mapping is in the file's header");
    }
    await this.o.db.tx((em) =>
      setParsed(em, imp.import_id, { rows_total: parsed.records.length, charset: decoded.charset, delimiter }),
    );
    let processed = imp.processed;
    while (processed < parsed.records.length) {
      if (this.stopping) {
        await this.o.db.tx((em) => releaseImport(em, imp.import_id));
        return;
      }
      const batch = parsed.records.slice(processed, processed + this.o.batchRows);
      const ok = await this.batch(imp, batch, processed, resolved, parsed.header.length);
      if (!ok) return; // another worker took it over
      processed += batch.length;
      this.o.published();
      await this.o.afterBatch?.(imp.import_id, processed);
    }
    await this.o.db.tx(async (em) => importFinished(em, await finishImport(em, imp.import_id, { state: "completed" })));
    this.o.published();
  }

  private async batch(
    imp: ImportRow,
    records: CsvRecord[],
    from: number,
    resolved: Resolved[],
    headerLength: number,
  ): Promise<boolean> {
    return this.o.db.tx(async (em) => {
      if (!(await holdImport(em, imp.import_id, from, this.o.leaseS))) return false;
      await planForTheseRows(em);
      const errors: (RowError & { line: number })[] = [];
      const mapped = [];
      for (const r of records) {
        const m = mapRow(r.fields, resolved, headerLength, this.o.stages);
        if (m.ok) mapped.push({ line: r.line, row: m.row });
        else errors.push(...m.errors.map((e) => ({ ...e, line: r.line })));
      }
      const failedRows = new Set(errors.map((e) => e.line)).size;
      const phones = mapped.flatMap((m) => (m.row.fields.phone ? [m.row.fields.phone] : []));
      const emails = mapped.flatMap((m) => (m.row.fields.email ? [m.row.fields.email] : []));
      const existing = await findKnown(em, phones, emails);
      const known = { byPhone: new Map<string, Known>(), byEmail: new Map<string, Known>() };
      for (const k of existing) {
        if (k.phone) known.byPhone.set(k.phone, k);
        if (k.email) known.byEmail.set(k.email, k);
      }
      const counts = { processed: records.length, created: 0, updated: 0, skipped: 0, failed: failedRows };
      const touched = new Map<string, Known>();
      for (const { line, row } of mapped) {
        const d = planRow(row, imp.duplicate_policy as DuplicatePolicy, known, randomUUID);
        if (d.kind === "fail") {
          errors.push({ ...d.error, line });
          counts.failed++;
        } else if (d.kind === "skip") counts.skipped++;
        else {
          counts[d.kind === "create" ? "created" : "updated"]++;
          touched.set(d.contact.customer_id, d.contact);
        }
      }
      const contacts = [...touched.values()];
      const tags = await ensureTags(
        em,
        contacts.flatMap((c) => c.tag_names),
      );
      await insertContacts(
        em,
        contacts.filter((c) => c.isNew),
      );
      await updateContacts(
        em,
        contacts.filter((c) => !c.isNew),
      );
      await insertRowErrors(
        em,
        imp.import_id,
        errors.sort((a, b) => a.line - b.line),
      );
      await addProgress(em, imp.import_id, counts);
      const tagIds = new Map(tags.map((t) => [t.name.toLowerCase(), t.tag_id]));
      await contactsImported(em, imp.import_id, contacts, tagIds);
      return true;
    });
  }

  private async fail(importId: string, reason: string, detail: string): Promise<void> {
    await this.o.db.tx(async (em) =>
      importFinished(em, await finishImport(em, importId, { state: "failed", reason, detail })),
    );
    this.o.published();
  }
}
