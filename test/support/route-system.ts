import { afterAll, beforeAll } from "vitest";
import { dumpErrors, fleetCredentials, type Credentials } from "./fleet-fixtures.ts";
import { startTestSystem, type TestSystem } from "./system.ts";

/** What a gateway route test file works with: the system, its admin, a credential of each kind. */
export interface RouteSystem {
  sys: TestSystem;
  admin: { token: string; agentId: string };
  creds: Credentials & { deviceId: string };
}

/**
 * The system of one gateway route test file: started before its tests (with `env`), with the
 * bootstrapped admin and one credential of each kind (`fleetCredentials`, logins prefixed
 * `prefix`), handed to `use`; stopped after its tests, the errors it logged printed. The
 * file's own `beforeAll` hooks, registered after this call, run after it.
 *
 *   routeSystem({ prefix: "dev" }, (s) => ({ sys, admin, creds } = s));
 */
export function routeSystem(
  options: { prefix: string; env?: Record<string, string> },
  use: (system: RouteSystem) => unknown,
): void {
  let sys: TestSystem | undefined;
  beforeAll(async () => {
    sys = await startTestSystem(options.env);
    const admin = await sys.api.bootstrapAdmin();
    const creds = await fleetCredentials(sys.api, admin.token, options.prefix, sys.db);
    use({ sys, admin, creds });
  });
  afterAll(async () => {
    dumpErrors(sys?.logs);
    for (const l of sys?.logs ?? []) if (/"level":"error"/.test(l) && !/kafka/.test(l)) console.log(l.slice(0, 1500));
    await sys?.stop();
  });
}
