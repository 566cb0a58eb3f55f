import { z } from "zod";
import { baseConfigShape, parseConfig } from "@transferops/kit";
import type { ServiceUrls } from "./services.ts";

export const gatewayConfigShape = {
  ...baseConfigShape,
  /** HTTP port of the /v1 API. */
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  /**
   * Connections the kernel holds for the gateway before it accepts them (capped by
   * net.core.somaxconn). Node's default, 511, dropped a third of a 1,550-connection burst's
   * SYNs, which clients resend only after a second.
   */
  LISTEN_BACKLOG: z.coerce.number().int().positive().default(4096),
  /** Sustained requests a second allowed per credential (or per client address without one). */
  RATE_LIMIT_RPS: z.coerce.number().positive().default(20),
  /** Burst allowed per credential above the sustained rate. */
  RATE_LIMIT_BURST: z.coerce.number().int().positive().default(60),
  /**
   * Longest a credential's authentication (session, device token, API key) is reused by this
   * replica without asking fleet; only a bound: fleet's announcements end an answer as soon
   * as the credential changes, and nothing is reused while they are not heard. 0 disables it.
   */
  AUTH_CACHE_TTL_MS: z.coerce.number().int().min(0).default(30_000),
  /**
   * How long a handset known idle (dispatch said so and announced no work for it since) is
   * answered 204 without asking dispatch; 0 asks dispatch on every poll. Only a safety net:
   * dispatch's announcements end an entry as soon as work is queued.
   */
  IDLE_POLL_CACHE_TTL_MS: z.coerce.number().int().min(0).default(120_000),
  /** Failed sign-ins allowed in a burst per login (case-insensitive) from one client address, whatever headers come with them. */
  LOGIN_FAILURES_BURST: z.coerce.number().int().positive().default(10),
  /** Failed sign-ins a minute per login from one client address after the burst. */
  LOGIN_FAILURES_PER_MIN: z.coerce.number().positive().default(5),
  /** Failed sign-ins allowed in a burst per client address (the socket's, never X-Forwarded-For). */
  LOGIN_ADDRESS_FAILURES_BURST: z.coerce.number().int().positive().default(50),
  /** Failed sign-ins a minute per client address after the burst. */
  LOGIN_ADDRESS_FAILURES_PER_MIN: z.coerce.number().positive().default(30),
  /** Failed sign-ins allowed in a burst per login from every address together (its global ceiling). */
  LOGIN_GLOBAL_FAILURES_BURST: z.coerce.number().int().positive().default(100),
  /** Failed sign-ins a minute per login from every address together after that burst. */
  LOGIN_GLOBAL_FAILURES_PER_MIN: z.coerce.number().positive().default(20),
  /**
   * The proxies in front of the gateway whose X-Forwarded-For gives the client address (comma
   * separated addresses or CIDRs, e.g. the ingress controller's pod range); none by default:
   * the socket's address.
   */
  TRUSTED_PROXIES: z
    .string()
    .default("")
    .transform((v) =>
      v
        .split(",")
        .map((x) => x.trim())
        .filter(Boolean),
    ),
  /** Deadline of a request across every service it calls. */
  REQUEST_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
};

export type GatewayConfig = z.infer<z.ZodObject<typeof gatewayConfigShape>>;

export const loadGatewayConfig = (env = process.env): GatewayConfig => parseConfig(gatewayConfigShape, env);

export const serviceUrlsOf = (c: GatewayConfig): ServiceUrls => ({
  fleet: c.FLEET_URL,
  dispatch: c.DISPATCH_URL,
  evidence: c.EVIDENCE_URL,
  intake: c.INTAKE_URL,
  analytics: c.ANALYTICS_URL,
  messaging: c.MESSAGING_URL,
});
