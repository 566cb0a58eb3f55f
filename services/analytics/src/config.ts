import { z } from "zod";
import { baseConfigShape, parseConfig, requireInProduction } from "@transferops/kit";

export const analyticsConfigShape = {
  ...baseConfigShape,
  GRPC_PORT: z.coerce.number().int().min(0).max(65535).default(50055),
};

export interface AnalyticsConfig {
  env: z.infer<z.ZodObject<typeof analyticsConfigShape>>;
  databaseUrl: string;
}

export function loadAnalyticsConfig(env = process.env): AnalyticsConfig {
  const e = parseConfig(analyticsConfigShape, env);
  return { env: e, databaseUrl: requireInProduction(e.NODE_ENV, "DATABASE_URL", e.DATABASE_URL, "") };
}
