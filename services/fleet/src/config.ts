import { z } from "zod";
import { baseConfigShape, csv, parseConfig, requireInProduction, ConfigError } from "@transferops/kit";
import { KeyringError, parseKeyring, type Keyring } from "./domain/pin-crypto.ts";
import type { RetryPolicy } from "./domain/webhooks.ts";
import { allowList, type EgressPolicy } from "./domain/egress.ts";

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
  SESSION_TTL_S: z.coerce
    .number()
    .int()
    .positive()
    .default(5 * 3600),
  /** Silence after which a device is offline and alerted; the contract fixes it at 5 minutes. */
  DEVICE_SILENT_AFTER_S: z.coerce.number().int().positive().default(300),
  /** How often fleet looks for silent devices, milliseconds. Default 30 s. */
  DEVICE_SILENCE_CHECK_MS: z.coerce.number().int().positive().default(30_000),
  /** How often the webhook worker looks for due deliveries, milliseconds. Default 1 s. */
  WEBHOOK_POLL_MS: z.coerce.number().int().positive().default(1_000),
  /** Delay after a first failed delivery attempt, doubled after each failure. Default 10 s. */
  WEBHOOK_RETRY_BASE_MS: z.coerce.number().int().positive().default(10_000),
  /** Ceiling of one retry delay. Default 1 hour. */
  WEBHOOK_RETRY_MAX_MS: z.coerce.number().int().positive().default(3_600_000),
  /** A delivery still failing this long after its event is given up. Default 24 hours. */
  WEBHOOK_GIVE_UP_AFTER_S: z.coerce.number().int().positive().default(86_400),
  /** Timeout of one delivery attempt. Default 10 s. */
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
  /** Webhook URLs may be http:// (https only by default). */
  WEBHOOK_ALLOW_HTTP: z
    .enum(["true", "false", "1", "0", ""])
    .default("false")
    .transform((v) => v === "true" || v === "1"),
  /**
   * Addresses and CIDRs webhooks may reach although they are loopback, private, link-local,
   * multicast, reserved or metadata addresses (comma separated); none by default.
   */
  WEBHOOK_ALLOWED_ADDRESSES: z.string().default(""),
};

export type FleetEnv = z.infer<z.ZodObject<typeof fleetConfigShape>>;

export interface FleetConfig {
  env: FleetEnv;
  databaseUrl: string;
  apiKeys: string[];
  messagingApiKeys: string[];
  bootstrapToken?: string;
  pinKeys: string;
  /** PIN_ENCRYPTION_KEYS parsed: the first key seals, every key opens. */
  pinKeyring: Keyring;
  sessionTtlS: number;
  deviceSilentAfterS: number;
  deviceSilenceCheckMs: number;
  webhooks: { pollMs: number; timeoutMs: number; retry: RetryPolicy; egress: EgressPolicy };
}

/** The PIN key of a local run and the tests (never production's: it refuses to start without its own). */
export const LOCAL_PIN_KEYS = "local:" + Buffer.alloc(32, 7).toString("base64");

/** Local defaults are safe for a laptop; production refuses to start without its secrets. */
export function loadFleetConfig(env = process.env): FleetConfig {
  const e = parseConfig(fleetConfigShape, env);
  const apiKeys = csv(requireInProduction(e.NODE_ENV, "API_KEYS", e.API_KEYS, "local-dev-api-key"));
  const pinKeys = requireInProduction(e.NODE_ENV, "PIN_ENCRYPTION_KEYS", e.PIN_ENCRYPTION_KEYS, LOCAL_PIN_KEYS);
  let pinKeyring: Keyring;
  try {
    pinKeyring = parseKeyring(pinKeys);
  } catch (err) {
    throw new ConfigError(`invalid configuration:\n  PIN_ENCRYPTION_KEYS: ${(err as KeyringError).message}`);
  }
  return {
    env: e,
    databaseUrl: requireInProduction(e.NODE_ENV, "DATABASE_URL", e.DATABASE_URL, ""),
    apiKeys,
    messagingApiKeys: e.MESSAGING_API_KEYS ? csv(e.MESSAGING_API_KEYS) : apiKeys,
    bootstrapToken: e.BOOTSTRAP_TOKEN || undefined,
    pinKeys,
    pinKeyring,
    sessionTtlS: e.SESSION_TTL_S,
    deviceSilentAfterS: e.DEVICE_SILENT_AFTER_S,
    deviceSilenceCheckMs: e.DEVICE_SILENCE_CHECK_MS,
    webhooks: {
      egress: { allowHttp: e.WEBHOOK_ALLOW_HTTP, allowed: allowedAddresses(e.WEBHOOK_ALLOWED_ADDRESSES) },
      pollMs: e.WEBHOOK_POLL_MS,
      timeoutMs: e.WEBHOOK_TIMEOUT_MS,
      retry: {
        baseDelayMs: e.WEBHOOK_RETRY_BASE_MS,
        maxDelayMs: e.WEBHOOK_RETRY_MAX_MS,
        giveUpAfterMs: e.WEBHOOK_GIVE_UP_AFTER_S * 1000,
      },
    },
  };
}

function allowedAddresses(csv: string) {
  try {
    return allowList(csv);
  } catch (err) {
    throw new ConfigError(`invalid configuration:\n  WEBHOOK_ALLOWED_ADDRESSES: ${(err as Error).message}`);
  }
}
