// How the domain says no. A refusal is the kit's `DomainError`, the one error type of
// the platform: a transport-neutral `status`, a stable snake_case `code`, the
// contract's `detail` text (also its `message`), and the ids and values relevant to it
// in `context`. The server interceptor maps the status onto a Connect code once; the
// gateway maps that onto HTTP.
//
// Convention across this folder: business-rule checks *return* their refusal
// (`DomainError | null` for a gate, `Result<T>` when a value is computed), so that
// callers branch on data. Only programming or configuration faults (status
// `internal`, e.g. a USSD template that cannot be built) are *thrown*.

import { DomainError, type ErrorStatus } from "@transferops/kit/pure";

export { DomainError };

/** The statuses a dispatch refusal may carry (the kit's, less `rate_limited`, which is the gateway's). */
export type DomainStatus = Exclude<ErrorStatus, "rate_limited">;

export type Result<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: DomainError };

export function ok<T>(value: T): Result<T> {
  return { ok: true, value };
}

export function fail<T = never>(error: DomainError): Result<T> {
  return { ok: false, error };
}

/** For callers that prefer exceptions (an rpc handler with one catch): the refusal is thrown as is. */
export function unwrap<T>(result: Result<T>): T {
  if (result.ok) return result.value;
  throw result.error;
}

export function isDomainError(value: unknown): value is DomainError {
  return value instanceof DomainError;
}
