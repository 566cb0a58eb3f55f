import { PeriodicJob, type Database, type Logger } from "@transferops/kit";
import { purgeKeys } from "../store/idempotency.ts";

/** Forgets Idempotency-Keys past their retention, once an hour. */
export class KeyPurge extends PeriodicJob {
  constructor(db: Database, retentionH: number, log: Logger) {
    super("idempotency key purge", 3600_000, () => db.tx((em) => purgeKeys(em, retentionH)), log);
  }
}
