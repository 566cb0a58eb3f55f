import { z } from "zod";

/**
 * Environment parsed and validated once at start. Each service extends `baseConfigShape`
 * with its own names; a bad value stops the process with every problem listed.
 */
export const baseConfigShape = {
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
  LOG_LEVEL: z.enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"]).default("info"),
  DATABASE_URL: z.string().url().optional(),
  /** "false" for a pooler that cannot keep prepared statements (PgBouncer in transaction mode). */
  DATABASE_PREPARED_STATEMENTS: z.enum(["true", "false"]).default("true"),
  /** "on" gives PostgreSQL's JIT back to the service's connections (off by default: docs/decisions.md). */
  DATABASE_JIT: z.enum(["on", "off"]).default("off"),
  /** Comma-separated host:port list; absent means the in-process bus (local run only). */
  KAFKA_BROKERS: z.string().optional(),
  /** Hours a published outbox row is kept (0 keeps every row); Kafka holds the events. */
  OUTBOX_RETENTION_H: z.coerce.number().min(0).default(168),
  /** Hours an inbox row (an applied event's id) is kept (0, the default, keeps every row; see events.ts). */
  INBOX_RETENTION_H: z.coerce.number().min(0).default(0),
  /** Prefix of every Kafka topic and consumer group; tests give each run its own. */
  KAFKA_TOPIC_PREFIX: z.string().default(""),
  /** Addresses of the services (gRPC over h2c); each calls only those it needs. */
  FLEET_URL: z.string().url().default("http://127.0.0.1:50051"),
  DISPATCH_URL: z.string().url().default("http://127.0.0.1:50052"),
  EVIDENCE_URL: z.string().url().default("http://127.0.0.1:50053"),
  INTAKE_URL: z.string().url().default("http://127.0.0.1:50054"),
  ANALYTICS_URL: z.string().url().default("http://127.0.0.1:50055"),
  MESSAGING_URL: z.string().url().default("http://127.0.0.1:50056"),
};

export type ConfigShape = Record<string, z.ZodType>;

export class ConfigError extends Error {}

export function parseConfig<S extends ConfigShape>(
  shape: S,
  env: Record<string, string | undefined> = process.env,
): z.infer<z.ZodObject<S>> {
  const result = z.object(shape).safeParse(env);
  if (!result.success) {
    const problems = result.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n  ${problems.join("\n  ")}`);
  }
  return result.data;
}

/** In production a secret must be set explicitly; elsewhere the local default applies. */
export function requireInProduction(
  nodeEnv: string,
  name: string,
  value: string | undefined,
  localDefault: string,
): string {
  if (value) return value;
  if (nodeEnv === "production") throw new ConfigError(`${name} must be set in production`);
  return localDefault;
}

export const csv = (value: string | undefined): string[] =>
  (value ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
