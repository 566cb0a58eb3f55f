import type { Database, Logger } from "@transferops/kit";
import type { DispatchConfig } from "../config.ts";
import type { UssdMenus } from "../domain/index.ts";
import { DomainError, unwrap, type Result } from "../domain/index.ts";
import type { FleetPort } from "./fleet-port.ts";
import type { IdleDevices } from "../store/idle-devices.ts";

/** What every dispatch handler may use. */
export interface DispatchDeps {
  db: Database;
  config: DispatchConfig;
  fleet: FleetPort;
  /** Called after a commit that wrote to the outbox (kicks the relay). */
  published: () => void;
  log: Logger;
  /** The clock; tests may pin it. */
  now: () => Date;
  menus?: UssdMenus;
  /** Handsets known to have nothing to do: their polls touch no database. */
  idle: IdleDevices;
}

/** Throws a gate's refusal, if any: the interceptor maps it once. */
export function check(refused: DomainError | null): void {
  if (refused !== null) throw refused;
}

export { unwrap };
export type { Result };
