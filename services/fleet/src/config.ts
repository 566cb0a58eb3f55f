import { z } from "zod";
import { baseConfigShape, csv, parseConfig, requireInProduction } from "@transferops/kit";

export const fleetConfigShape = {
  ...baseConfigShape,
  /** Port of the gRPC/Connect h2c server. */
  GRPC_PORT: z.coerce.number().int().min(0).max(65535).default(50051),
  /** Automation API keys, comma-separated; several may be valid at once for rotation. */
  API_KEYS: z.string().optional(),
  /** Bearer keys of the messaging-side API; defaults to API_KEYS. */
  MESSAGING_API_KEYS: z.string().optional(),
  /** Secret of the X-Bootstrap-Token header; unset means bootstrap is refused. */
  BOOTSTRAP_TOKEN: z.string().optional(),
  /** `keyId:base64key` pairs (32-byte keys), comma-separated; the first encrypts, all decrypt. */
  PIN_ENCRYPTION_KEYS: z.string().optional(),
  /** Session lifetime; the contract fixes it at 5 hours. */
  SESSION_TTL_S: z.coerce.number().int().positive().default(5 * 3600),
};

export type FleetEnv = z.infer<z.ZodObject<typeof fleetConfigShape>>;

export interface FleetConfig {
  env: FleetEnv;
  databaseUrl: string;
  apiKeys: string[];
  messagingApiKeys: string[];
  bootstrapToken?: string;
  pinKeys: string;
  sessionTtlS: number;
}

/** Local defaults are safe for a laptop; production refuses to start without its secrets. */
export function loadFleetConfig(env = process.env): FleetConfig {
  const e = parseConfig(fleetConfigShape, env);
  const apiKeys = csv(requireInProduction(e.NODE_ENV, "API_KEYS", e.API_KEYS, "local-dev-api-key"));
  return {
    env: e,
    databaseUrl: requireInProduction(e.NODE_ENV, "DATABASE_URL", e.DATABASE_URL, ""),
    apiKeys,
    messagingApiKeys: e.MESSAGING_API_KEYS ? csv(e.MESSAGING_API_KEYS) : apiKeys,
    bootstrapToken: e.BOOTSTRAP_TOKEN || undefined,
    pinKeys: requireInProduction(
      e.NODE_ENV,
      "PIN_ENCRYPTION_KEYS",
      e.PIN_ENCRYPTION_KEYS,
      "local:" + Buffer.alloc(32, 7).toString("base64"),
    ),
    sessionTtlS: e.SESSION_TTL_S,
  };
}
