import { createServer } from "node:net";

/**
 * A port free right now on the loopback interface, drawn at random below Linux's ephemeral
 * range (32768–60999), where no outgoing connection of another process can take it between
 * this check and the caller's listen. Parallel runs may still draw the same one: startSystem
 * retries with new ports when a listen finds its port taken.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const candidate = 20_000 + Math.floor(Math.random() * 12_000);
    if (await isFree(candidate)) return candidate;
  }
}

/** Whether nothing listens on `port` of the loopback interface right now. */
export function isFree(port: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const srv = createServer();
    srv.once("error", () => resolve(false));
    srv.listen(port, "127.0.0.1", () => srv.close(() => resolve(true)));
  });
}
