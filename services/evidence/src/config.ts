import { z } from "zod";
import { baseConfigShape, parseConfig, requireInProduction } from "@transferops/kit";
import { DEFAULT_SENDER_IDS, parseSenderList, type SenderIds } from "./domain/senders.ts";

/** A comma-separated list of sender ids with at least one entry. */
const senderList = (defaults: readonly string[]) =>
  z
    .string()
    .max(2000)
    .default(defaults.join(","))
    .transform(parseSenderList)
    .refine((ids) => ids.length > 0, "at least one sender id");

export const evidenceConfigShape = {
  ...baseConfigShape,
  /** Port of the gRPC/Connect h2c server. */
  GRPC_PORT: z.coerce.number().int().min(0).max(65535).default(50053),
  /** How often the re-drive finishes messages a crash or an unreachable service left pending. */
  EVIDENCE_REDRIVE_INTERVAL_MS: z.coerce.number().int().positive().default(5_000),
  /** The re-drive leaves a message this long to the submission that stored it. */
  EVIDENCE_REDRIVE_GRACE_MS: z.coerce.number().int().min(0).default(10_000),
  /**
   * How often the day keeper sums the closed days' balance accounts not kept yet (ahead of their
   * first read; flows/day-keeper.ts).
   */
  EVIDENCE_DAY_KEEP_INTERVAL_MS: z.coerce.number().int().positive().default(300_000),
  /**
   * The most closed days one pass of the day keeper sums, newest first, of any age (0: none, each
   * day is summed at its first read).
   */
  EVIDENCE_DAY_KEEP_DAYS_PER_PASS: z.coerce.number().int().min(0).max(366).default(31),
  /** Database connections; correlation holds one across its call to dispatch. */
  EVIDENCE_DB_POOL_MAX: z.coerce.number().int().positive().default(20),
  /** operator_a's sender ids (comma-separated); a message from any other sender never confirms. */
  OPERATOR_A_SENDERS: senderList(DEFAULT_SENDER_IDS.operator_a),
  /** operator_b's sender ids (comma-separated). */
  OPERATOR_B_SENDERS: senderList(DEFAULT_SENDER_IDS.operator_b),
};

export type EvidenceEnv = z.infer<z.ZodObject<typeof evidenceConfigShape>>;

export interface EvidenceConfig {
  env: EvidenceEnv;
  databaseUrl: string;
  redrive: { intervalMs: number; graceMs: number };
  dayKeep: { intervalMs: number; daysPerPass: number };
  poolMax: number;
  senders: SenderIds;
}

/** Local defaults are safe for a laptop; production refuses to start without its database. */
export function loadEvidenceConfig(env = process.env): EvidenceConfig {
  const e = parseConfig(evidenceConfigShape, env);
  return {
    env: e,
    databaseUrl: requireInProduction(e.NODE_ENV, "DATABASE_URL", e.DATABASE_URL, ""),
    redrive: { intervalMs: e.EVIDENCE_REDRIVE_INTERVAL_MS, graceMs: e.EVIDENCE_REDRIVE_GRACE_MS },
    dayKeep: { intervalMs: e.EVIDENCE_DAY_KEEP_INTERVAL_MS, daysPerPass: e.EVIDENCE_DAY_KEEP_DAYS_PER_PASS },
    poolMax: e.EVIDENCE_DB_POOL_MAX,
    senders: { operator_a: e.OPERATOR_A_SENDERS, operator_b: e.OPERATOR_B_SENDERS },
  };
}
