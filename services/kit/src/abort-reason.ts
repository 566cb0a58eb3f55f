// Connect ends every call, on both ends, by aborting an AbortController without a reason
// (and its client side once more, already aborted). Node builds the default reason, a new
// DOMException, on every such call, even one that does nothing, and the DOMException
// captures its stack: about 50 µs a call on the claim path (3-4 % of fleet's and dispatch's
// CPU in `--cpu-prof` profiles of the claims benchmark).
//
// Imported by the kit's server and client (once per process): from then on an abort
// without a reason gets the same AbortError DOMException built without a stack trace, and
// an abort of an already aborted controller builds nothing (it did nothing before either).
// A listener sees the same reason (a DOMException named "AbortError", same message); only
// its `stack` is empty. An abort given a reason is unchanged.

const abort = AbortController.prototype.abort;

function abortError(): DOMException {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return new DOMException("This operation was aborted", "AbortError");
  } finally {
    Error.stackTraceLimit = limit;
  }
}

AbortController.prototype.abort = function (this: AbortController, reason?: unknown): void {
  if (this.signal.aborted) return;
  abort.call(this, reason === undefined ? abortError() : reason);
};
