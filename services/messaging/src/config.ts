import { z } from "zod";
import { baseConfigShape, csv, parseConfig, requireInProduction } from "@transferops/kit";

/**
 * Messaging's environment. The defaults and their reasons are in
 * docs/decisions/messaging.md.
 */
export const messagingConfigShape = {
  ...baseConfigShape,
  /** Port of the gRPC/Connect h2c server. */
  GRPC_PORT: z.coerce.number().int().min(0).max(65535).default(50056),
  /** Lifecycle stages a contact can be given, in display order (respond.io's defaults). */
  LIFECYCLE_STAGES: z.string().default("new_lead,hot_lead,payment,customer,cold_lead"),
  /** How long an Idempotency-Key is kept; the contract's rule is at least 24 hours. */
  IDEMPOTENCY_RETENTION_H: z.coerce.number().int().min(24).default(24),
  /** Rows one import transaction writes; progress is committed after each batch. */
  IMPORT_BATCH_ROWS: z.coerce.number().int().min(1).max(10000).default(1000),
  /** How often the import worker looks for queued imports (it is also woken on create). */
  IMPORT_POLL_MS: z.coerce.number().int().positive().default(1000),
  /** How long a worker's claim on an import lasts without progress before another takes it over. */
  IMPORT_LEASE_S: z.coerce.number().int().positive().default(60),
  /** Largest decoded import file. */
  IMPORT_MAX_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(50 * 1024 * 1024),
  /** Connection pool of the messaging schema. */
  DB_POOL_MAX: z.coerce.number().int().positive().default(10),
};

export type MessagingEnv = z.infer<z.ZodObject<typeof messagingConfigShape>>;

export interface MessagingConfig {
  env: MessagingEnv;
  databaseUrl: string;
  fleetUrl: string;
  lifecycleStages: string[];
  idempotencyRetentionH: number;
  importBatchRows: number;
  importPollMs: number;
  importLeaseS: number;
  importMaxBytes: number;
  dbPoolMax: number;
}

export function loadMessagingConfig(env = process.env): MessagingConfig {
  const e = parseConfig(messagingConfigShape, env);
  return {
    env: e,
    databaseUrl: requireInProduction(e.NODE_ENV, "DATABASE_URL", e.DATABASE_URL, ""),
    fleetUrl: e.FLEET_URL,
    lifecycleStages: csv(e.LIFECYCLE_STAGES),
    idempotencyRetentionH: e.IDEMPOTENCY_RETENTION_H,
    importBatchRows: e.IMPORT_BATCH_ROWS,
    importPollMs: e.IMPORT_POLL_MS,
    importLeaseS: e.IMPORT_LEASE_S,
    importMaxBytes: e.IMPORT_MAX_BYTES,
    dbPoolMax: e.DB_POOL_MAX,
  };
}
