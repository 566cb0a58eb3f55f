import { z } from "zod";
import { baseConfigShape, ConfigError, parseConfig, requireInProduction } from "@transferops/kit";

/**
 * Dispatch's environment. The window lengths are the contract's "not shown" values;
 * the defaults and their reasons are in docs/decisions/dispatch.md.
 */
export const dispatchConfigShape = {
  ...baseConfigShape,
  /** Port of the gRPC/Connect h2c server. */
  GRPC_PORT: z.coerce.number().int().min(0).max(65535).default(50052),
  /** How long an operation that dialled waits in awaiting_evidence before the sweep makes it no_evidence (from finished_at). */
  EVIDENCE_WINDOW_S: z.coerce.number().int().positive().default(600),
  /** How long after finished_at a no_evidence operation can still be confirmed by a late operator message. */
  LATE_EVIDENCE_S: z.coerce.number().int().positive().default(7200),
  /** A handset that finished an operation gets 204 on poll for this long. */
  DEVICE_COOLDOWN_S: z.coerce.number().int().min(0).default(10),
  /** `timeout_seconds` of the dispatch payload: how long the handset waits for the USSD dialog. */
  USSD_TIMEOUT_S: z.coerce.number().int().positive().default(90),
  /** How often the evidence-window sweep runs. */
  /** A running operation whose handset has not reported this long after the claim goes to no_evidence. */
  RUNNING_TIMEOUT_S: z.coerce.number().int().positive().default(900),
  SWEEP_INTERVAL_S: z.coerce.number().positive().default(30),
  /** Largest batch one sweep pass moves (it loops until nothing is left). */
  SWEEP_BATCH: z.coerce.number().int().positive().default(500),
  /** Balance readings older than this are refused at creation (the contract's 24 hours). */
  BALANCE_STALENESS_S: z.coerce
    .number()
    .int()
    .positive()
    .default(24 * 3600),
  /** Refuse USSD templates not yet verified on a real line (ussd-menus.json `verified`). */
  USSD_REQUIRE_VERIFIED: z
    .enum(["true", "false", "1", "0"])
    .default("false")
    .transform((v) => v === "true" || v === "1"),
  /**
   * How long a handset found idle is answered from memory (its polls then touch no
   * database); work queued for it ends that at once (LISTEN/NOTIFY). 0 turns it off.
   */
  IDLE_DEVICE_TTL_S: z.coerce.number().min(0).default(60),
  /** Connection pool of the dispatch schema. */
  DB_POOL_MAX: z.coerce.number().int().positive().default(20),
};

export type DispatchEnv = z.infer<z.ZodObject<typeof dispatchConfigShape>>;

export interface DispatchConfig {
  env: DispatchEnv;
  databaseUrl: string;
  fleetUrl: string;
  evidenceWindowS: number;
  lateEvidenceS: number;
  deviceCooldownS: number;
  ussdTimeoutS: number;
  runningTimeoutS: number;
  sweepIntervalMs: number;
  sweepBatch: number;
  balanceStalenessMs: number;
  ussdRequireVerified: boolean;
  dbPoolMax: number;
  idleDeviceTtlMs: number;
}

export function loadDispatchConfig(env = process.env): DispatchConfig {
  const e = parseConfig(dispatchConfigShape, env);
  if (e.LATE_EVIDENCE_S < e.EVIDENCE_WINDOW_S) {
    // Both run from finished_at: a late window shorter than the evidence window would
    // close before the sweep could ever produce a provable no_evidence operation.
    throw new ConfigError(
      `invalid configuration:\n  LATE_EVIDENCE_S (${e.LATE_EVIDENCE_S}) must be at least EVIDENCE_WINDOW_S (${e.EVIDENCE_WINDOW_S})`,
    );
  }
  return {
    env: e,
    databaseUrl: requireInProduction(e.NODE_ENV, "DATABASE_URL", e.DATABASE_URL, ""),
    fleetUrl: e.FLEET_URL,
    evidenceWindowS: e.EVIDENCE_WINDOW_S,
    lateEvidenceS: e.LATE_EVIDENCE_S,
    deviceCooldownS: e.DEVICE_COOLDOWN_S,
    ussdTimeoutS: e.USSD_TIMEOUT_S,
    runningTimeoutS: e.RUNNING_TIMEOUT_S,
    sweepIntervalMs: Math.round(e.SWEEP_INTERVAL_S * 1000),
    sweepBatch: e.SWEEP_BATCH,
    balanceStalenessMs: e.BALANCE_STALENESS_S * 1000,
    ussdRequireVerified: e.USSD_REQUIRE_VERIFIED,
    dbPoolMax: e.DB_POOL_MAX,
    idleDeviceTtlMs: Math.round(e.IDLE_DEVICE_TTL_S * 1000),
  };
}
