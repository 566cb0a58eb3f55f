import { z } from "zod";
import { baseConfigShape, parseConfig, requireInProduction } from "@transferops/kit";

/**
 * Analytics' environment. The thresholds are dispatch's own settings (same variable names
 * and defaults, docs/decisions/dispatch.md): the report states the windows it judged by.
 */
export const analyticsConfigShape = {
  ...baseConfigShape,
  GRPC_PORT: z.coerce.number().int().min(0).max(65535).default(50055),
  EVIDENCE_WINDOW_S: z.coerce.number().int().positive().default(600),
  LATE_EVIDENCE_S: z.coerce.number().int().positive().default(7200),
  /** A SIM whose balance reading is older than this is `stale` (the contract's 24 hours). */
  BALANCE_STALENESS_S: z.coerce
    .number()
    .int()
    .positive()
    .default(24 * 3600),
};

export interface AnalyticsConfig {
  env: z.infer<z.ZodObject<typeof analyticsConfigShape>>;
  databaseUrl: string;
  evidenceWindowS: number;
  lateEvidenceS: number;
  balanceStalenessMs: number;
}

export function loadAnalyticsConfig(env = process.env): AnalyticsConfig {
  const e = parseConfig(analyticsConfigShape, env);
  return {
    env: e,
    databaseUrl: requireInProduction(e.NODE_ENV, "DATABASE_URL", e.DATABASE_URL, ""),
    evidenceWindowS: e.EVIDENCE_WINDOW_S,
    lateEvidenceS: e.LATE_EVIDENCE_S,
    balanceStalenessMs: e.BALANCE_STALENESS_S * 1000,
  };
}
