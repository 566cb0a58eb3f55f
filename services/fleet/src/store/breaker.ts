import { one, type EntityManager } from "@transferops/kit";
import { date } from "./values.ts";

const breaker = (r: BreakerRecord | undefined): BreakerRecord => ({
  active: r!.active,
  changed_at: date(r!.changed_at),
});

export interface BreakerRecord {
  active: boolean;
  changed_at: Date;
}

export async function readBreaker(em: EntityManager): Promise<BreakerRecord> {
  return breaker(await one<BreakerRecord>(em, `select active, changed_at from fleet.circuit_breaker where id = 1`));
}

/** Locks the breaker row: its changes and the device freezes they cause are serialised. */
export async function lockBreaker(em: EntityManager): Promise<BreakerRecord> {
  return breaker(
    await one<BreakerRecord>(em, `select active, changed_at from fleet.circuit_breaker where id = 1 for update`),
  );
}

export async function setBreaker(em: EntityManager, active: boolean, by: string): Promise<BreakerRecord> {
  return breaker(
    await one<BreakerRecord>(
      em,
      `update fleet.circuit_breaker set active = ?, changed_at = now(), changed_by = ? where id = 1 returning active, changed_at`,
      [active, by],
    ),
  );
}
