// Small helpers shared by the test infrastructure modules.

import net from "node:net";

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

/** Picks `n` distinct free TCP ports on 127.0.0.1 by binding port 0 (all at once, then closing). */
export async function freePorts(n: number): Promise<number[]> {
  const servers: net.Server[] = [];
  try {
    const ports: number[] = [];
    for (let i = 0; i < n; i++) {
      const server = net.createServer();
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(0, "127.0.0.1", () => resolve());
      });
      ports.push((server.address() as net.AddressInfo).port);
    }
    return ports;
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  }
}
