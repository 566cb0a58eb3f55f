import { pino, type Logger } from "pino";
import { currentContext } from "./context.ts";

export type { Logger };

/**
 * Keys whose values never reach a log line, at any depth: PINs, tokens, passwords,
 * API keys and the USSD dial sequence (it holds the decrypted PIN).
 */
const SECRET_KEY =
  /^(pin|pins|password|current_password|new_password|temporary_password|token|device_token|session_token|secret|api_key|x-api-key|authorization|x-bootstrap-token|bootstrap_token|ussd_steps|ussd_string|ussdsteps|ussdstring|pin_ciphertext|pin_encryption_keys|api_keys)$/i;

export const REDACTED = "[redacted]";

export function redact(value: unknown, depth = 0): unknown {
  if (depth > 8 || value === null || typeof value !== "object") return value;
  if (value instanceof Error) {
    return { type: value.name, message: value.message, stack: value.stack };
  }
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  if (value instanceof Date || value instanceof Uint8Array) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = SECRET_KEY.test(k) ? REDACTED : redact(v, depth + 1);
  }
  return out;
}

export interface LoggerOptions {
  level?: string;
  /** Where lines go; tests pass a stream to read them back. */
  destination?: pino.DestinationStream;
}

export function createLogger(service: string, options: LoggerOptions = {}): Logger {
  return pino(
    {
      level: options.level ?? "info",
      base: { service },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: {
        level: (label) => ({ level: label }),
        log: (object) => redact(object) as Record<string, unknown>,
      },
      mixin: () => {
        const ctx = currentContext();
        return ctx ? { correlation_id: ctx.correlationId } : {};
      },
    },
    options.destination ?? pino.destination({ dest: 1, sync: false }),
  );
}
