// Shared, memoised probe: is there a container runtime testcontainers can use?
//
// testcontainers is imported lazily so that machines without Docker/Podman never
// pay for (or get side effects from) loading it. Without a runtime,
// getContainerRuntimeClient() throws "Could not find a working container runtime
// strategy" within a second or so; we remember that answer for the whole process
// so ensurePostgres() and ensureKafka() probe only once between them.

import { message, type Log } from "./util.ts";

export type Testcontainers = typeof import("testcontainers");

export type RuntimeProbe =
  { available: true; tc: Testcontainers; description: string } | { available: false; reason: string };

let probe: Promise<RuntimeProbe> | undefined;

export function probeContainerRuntime(log: Log): Promise<RuntimeProbe> {
  probe ??= (async (): Promise<RuntimeProbe> => {
    let tc: Testcontainers;
    try {
      tc = await import("testcontainers");
    } catch (err) {
      return { available: false, reason: `testcontainers could not be loaded: ${message(err)}` };
    }
    try {
      const client = await tc.getContainerRuntimeClient();
      const rt = client.info.containerRuntime;
      const description = `${rt.operatingSystem} on ${rt.host} (server ${rt.serverVersion})`;
      return { available: true, tc, description };
    } catch (err) {
      const reason = message(err);
      log(`[infra] no container runtime (${reason}); not using testcontainers`);
      return { available: false, reason };
    }
  })();
  return probe;
}
