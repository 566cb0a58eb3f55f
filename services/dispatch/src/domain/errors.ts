// How the domain says no. A refusal is a value (`DomainError`) carrying a stable
// snake_case `code`, a transport-neutral `status`, the contract's `detail` text as
// its message, and the ids and values relevant to it in `context`. `rpc/` maps the
// status onto a Connect code once; the gateway maps that onto HTTP.
//
// Convention across this folder: business-rule checks *return* their refusal
// (`DomainError | null` for a gate, `Result<T>` when a value is computed), so that
// callers branch on data. Only programming or configuration faults (status
// `internal`, e.g. a USSD template that cannot be built) are *thrown*.

export type DomainStatus =
  | "bad_request" // 400
  | "unauthenticated" // 401
  | "forbidden" // 403
  | "not_found" // 404
  | "conflict" // 409
  | "refused" // 422, business-rule refusal
  | "invalid" // 422, validation of the request's values
  | "locked" // 423
  | "internal"; // 500

export class DomainError extends Error {
  // Fields are declared and assigned explicitly rather than as constructor
  // parameter properties: that syntax is not erasable, and plain type stripping
  // (node --experimental-strip-types) rejects it.
  readonly code: string;
  readonly status: DomainStatus;
  readonly context: Record<string, unknown>;

  constructor(code: string, status: DomainStatus, message: string, context: Record<string, unknown> = {}) {
    super(message);
    this.name = "DomainError";
    this.code = code;
    this.status = status;
    this.context = context;
  }

  /** The contract's `detail` text; the same string as `message`. */
  get detail(): string {
    return this.message;
  }
}

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
