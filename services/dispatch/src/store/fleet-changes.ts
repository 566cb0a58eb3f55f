import { rows, type EntityManager } from "@transferops/kit";
import { OPERATION_COLUMNS, toRecord, type OperationRecord } from "./operations.ts";

/** Locks the operations of a SIM (or a device) in the given statuses. */
export async function lockOperationsOf(
  em: EntityManager,
  column: "sim_id" | "device_id",
  id: string,
  statuses: readonly string[],
): Promise<OperationRecord[]> {
  const found = await rows<Record<string, unknown>>(
    em,
    `select ${OPERATION_COLUMNS} from dispatch.operations o
      where o.${column} = ? and o.status in (?) order by o.operation_id for update of o`,
    [id, [...statuses]],
  );
  return found.map(toRecord);
}

/**
 * Operations keep their rows; only the reference to the deleted SIM or device goes, and a
 * deleted SIM's counts with it (its operations, now of no SIM, fire no count: Migration0011SimCounts).
 */
export async function forgetReference(em: EntityManager, column: "sim_id" | "device_id", id: string): Promise<number> {
  const r = (await em.execute(
    `update dispatch.operations set ${column} = null, updated_at = clock_timestamp() where ${column} = ? returning 1`,
    [id],
  )) as unknown[];
  if (column === "sim_id") await em.execute(`delete from dispatch.sim_operation_counts where sim_id = ?`, [id]);
  return r.length;
}

/** A SIM moved to another handset (or slot): its queued work follows it. */
export async function rerouteQueued(
  em: EntityManager,
  simId: string,
  deviceId: string,
  slot: number | null,
): Promise<number> {
  const r = (await em.execute(
    `update dispatch.operations
        set device_id = ?, subscription_slot = ?,
            device_label = case when device_id = ? then device_label else null end,
            updated_at = clock_timestamp()
      where sim_id = ? and status = 'queued' and (device_id is distinct from ? or subscription_slot is distinct from ?)
      returning 1`,
    [deviceId, slot, deviceId, simId, deviceId, slot],
  )) as unknown[];
  return r.length;
}

/**
 * A SIM taken out of its handset: its queued work leaves that handset (no device, so no
 * poll claims it) and waits; assigning the SIM again reroutes it (rerouteQueued).
 */
export async function holdQueued(em: EntityManager, simId: string): Promise<number> {
  const r = (await em.execute(
    `update dispatch.operations
        set device_id = null, subscription_slot = null, device_label = null, updated_at = clock_timestamp()
      where sim_id = ? and status = 'queued' and device_id is not null
      returning 1`,
    [simId],
  )) as unknown[];
  return r.length;
}
