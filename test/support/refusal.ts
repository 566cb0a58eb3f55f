// Catching a refusal, once for every test: the DomainError a rule throws or a flow rejects
// with, or the ConnectError a call through a transport gets. Each fails the test on any other
// throw, and (but `refusalOrNone`) when nothing was refused, so an error test cannot pass on a
// call that succeeded or broke for another reason.
import { ConnectError } from "@connectrpc/connect";
import { DomainError } from "@transferops/kit/pure";

/** The DomainError `run` throws; fails on another throw or none. */
export function refusalThrownBy(run: () => unknown): DomainError {
  const e = refusalOrNone(run);
  if (!e) throw new Error("expected a refusal, but nothing was thrown");
  return e;
}

/** The DomainError `run` throws, undefined when it throws nothing; fails on another throw. */
export function refusalOrNone(run: () => unknown): DomainError | undefined {
  try {
    run();
  } catch (err) {
    if (err instanceof DomainError) return err;
    throw err;
  }
  return undefined;
}

/** The DomainError `call` rejects with; fails on another rejection or none. */
export async function rejectionOf(call: Promise<unknown>): Promise<DomainError> {
  try {
    await call;
  } catch (err) {
    if (err instanceof DomainError) return err;
    throw err;
  }
  throw new Error("expected a refusal, but the call succeeded");
}

/** The ConnectError `call` rejects with (any rejection, as a ConnectError); fails when it succeeds. */
export async function connectErrorOf(call: Promise<unknown>): Promise<ConnectError> {
  try {
    await call;
  } catch (err) {
    return ConnectError.from(err);
  }
  throw new Error("expected a refusal, but the call succeeded");
}
