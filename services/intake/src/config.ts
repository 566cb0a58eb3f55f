import { z } from "zod";
import { baseConfigShape, ConfigError, parseConfig, requireInProduction } from "@transferops/kit";

/** The three double-launch protections, each of which a test may turn off to show the other two hold. */
export const PROTECTIONS = ["claim", "request_id", "unique_operation"] as const;
export type Protection = (typeof PROTECTIONS)[number];

export const intakeConfigShape = {
  ...baseConfigShape,
  GRPC_PORT: z.coerce.number().int().min(0).max(65535).default(50054),
  /**
   * A launch claim older than this with no operation recorded is taken to be a launch
   * that crashed: a retried launch or the sweep completes it. Longer than any dispatch
   * call (whose deadline is 10 s), so a launch still in flight is never completed twice.
   */
  CLAIM_STALE_S: z.coerce.number().positive().default(60),
  /** How often the launch sweep looks for stale claims. */
  LAUNCH_SWEEP_INTERVAL_S: z.coerce.number().positive().default(30),
  /** Connection pool of the intake schema. */
  DB_POOL_MAX: z.coerce.number().int().positive().default(10),
  /** Test only (NODE_ENV=test): turns one double-launch protection off. */
  INTAKE_TEST_DISABLE_PROTECTION: z.enum(["", ...PROTECTIONS]).default(""),
  /** Test only (NODE_ENV=test): the first N launches stop dead after the claim commits, as a crash would. */
  INTAKE_TEST_CRASH_AFTER_CLAIM: z.coerce.number().int().min(0).default(0),
  /** Test only (NODE_ENV=test): the first N launches stop dead after dispatch created the operation, before it is recorded. */
  INTAKE_TEST_CRASH_AFTER_CREATE: z.coerce.number().int().min(0).default(0),
};

export type IntakeEnv = z.infer<z.ZodObject<typeof intakeConfigShape>>;

export interface IntakeConfig {
  env: IntakeEnv;
  databaseUrl: string;
  dispatchUrl: string;
  fleetUrl: string;
  claimStaleMs: number;
  sweepIntervalMs: number;
  dbPoolMax: number;
  /** Test switches; both inert outside NODE_ENV=test (the configuration refuses them). */
  disabledProtection: Protection | null;
  crashAfterClaim: number;
  crashAfterCreate: number;
}

export function loadIntakeConfig(env = process.env): IntakeConfig {
  const e = parseConfig(intakeConfigShape, env);
  if (
    e.NODE_ENV !== "test" &&
    (e.INTAKE_TEST_DISABLE_PROTECTION || e.INTAKE_TEST_CRASH_AFTER_CLAIM || e.INTAKE_TEST_CRASH_AFTER_CREATE)
  ) {
    throw new ConfigError("invalid configuration:\n  INTAKE_TEST_* switches are accepted only with NODE_ENV=test");
  }
  return {
    env: e,
    databaseUrl: requireInProduction(e.NODE_ENV, "DATABASE_URL", e.DATABASE_URL, ""),
    dispatchUrl: e.DISPATCH_URL,
    fleetUrl: e.FLEET_URL,
    claimStaleMs: Math.round(e.CLAIM_STALE_S * 1000),
    sweepIntervalMs: Math.round(e.LAUNCH_SWEEP_INTERVAL_S * 1000),
    dbPoolMax: e.DB_POOL_MAX,
    disabledProtection: e.INTAKE_TEST_DISABLE_PROTECTION || null,
    crashAfterClaim: e.INTAKE_TEST_CRASH_AFTER_CLAIM,
    crashAfterCreate: e.INTAKE_TEST_CRASH_AFTER_CREATE,
  };
}
