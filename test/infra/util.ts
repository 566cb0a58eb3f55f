// Small helpers shared by the test infrastructure modules.

import { freePort } from "../../deploy/local/ports.ts";

export type Log = (s: string) => void;

export function message(err: unknown): string {
  if (err instanceof AggregateError && err.errors.length > 0) {
    return err.errors.map((e: unknown) => message(e)).join("; ");
  }
  if (err instanceof Error) return err.message || err.name;
  return String(err);
}

export function isErrno(err: unknown, code: string): boolean {
  return typeof err === "object" && err !== null && (err as NodeJS.ErrnoException).code === code;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** True if a process with this pid exists (on this host). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return isErrno(err, "EPERM");
  }
}

/** Picks `n` distinct free TCP ports on 127.0.0.1 (see freePort: below the ephemeral range). */
export async function freePorts(n: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < n) ports.add(await freePort());
  return [...ports];
}

/**
 * Node flags for a spawned service process: kafkajs 2.2.4 schedules its request queue's first check
 * with a negative delay, which Node 24 reports as a TimeoutNegativeWarning on every connection
 * (harmless: Node runs it after 1 ms). The image's entry point passes the same flag.
 */
export const QUIET_KAFKAJS = ["--disable-warning=TimeoutNegativeWarning"];
