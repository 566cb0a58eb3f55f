import { one, type EntityManager } from "@transferops/kit";

export interface FleetCounts {
  devices_total: number;
  devices_online: number;
  devices_frozen: number;
  sims_total: number;
  sims_unmeasured: number;
  sims_stale: number;
  sims_frozen: number;
  sims_unassigned: number;
}

/** Device and SIM counts for the fleet health route, in one snapshot. */
export async function fleetCounts(em: EntityManager, onlineWithinS: number, staleAfterS: number): Promise<FleetCounts> {
  const d = await one<Pick<FleetCounts, "devices_total" | "devices_online" | "devices_frozen">>(
    em,
    `select count(*)::int as devices_total,
            count(*) filter (where last_seen_at >= now() - make_interval(secs => ?))::int as devices_online,
            count(*) filter (where status = 'frozen')::int as devices_frozen
       from fleet.devices`,
    [onlineWithinS],
  );
  const s = await one<Omit<FleetCounts, "devices_total" | "devices_online" | "devices_frozen">>(
    em,
    `select count(*)::int as sims_total,
            count(*) filter (where balance_updated_at is null)::int as sims_unmeasured,
            count(*) filter (where balance_updated_at < now() - make_interval(secs => ?))::int as sims_stale,
            count(*) filter (where status = 'frozen')::int as sims_frozen,
            count(*) filter (where device_id is null)::int as sims_unassigned
       from fleet.sims`,
    [staleAfterS],
  );
  return { ...d!, ...s! };
}
