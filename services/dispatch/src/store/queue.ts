import { one, rows, type EntityManager, type OutboxEvent } from "@transferops/kit";
import { LOCKED_AT, OPERATION_COLUMNS, toRecord, updateOperation, type OperationRecord } from "./operations.ts";
import { isUniqueViolation, toDate } from "./sql.ts";

/** What a poll must know about its device before touching anything. */
export interface DeviceQueueState {
  has_running: boolean;
  has_queued: boolean;
  last_finished_at: Date | null;
  /** Frozen by fleet (the circuit breaker): no queued work is handed out. */
  frozen: boolean;
}

/** The state's columns (parameters: the device id four times). */
const STATE_COLUMNS = `
       exists (select 1 from dispatch.operations where device_id = ? and status = 'running') as has_running,
       exists (select 1 from dispatch.operations where device_id = ? and status = 'queued') as has_queued,
       (select o.finished_at from dispatch.operations o
         where o.device_id = ? and o.started_at is not null and o.finished_at is not null
         order by o.finished_at desc limit 1) as last_finished_at,
       exists (select 1 from dispatch.devices where device_id = ? and status = 'frozen') as frozen`;

type StateRow = { has_running: boolean; has_queued: boolean; last_finished_at: unknown; frozen: boolean };

const toState = (r: StateRow | undefined): DeviceQueueState => ({
  has_running: Boolean(r?.has_running),
  has_queued: Boolean(r?.has_queued),
  last_finished_at: toDate(r?.last_finished_at),
  frozen: Boolean(r?.frozen),
});

/**
 * One read, three index lookups (the running-per-device unique index, the queued-by-device
 * index, the device's last finished dial). An empty poll stops here: it writes nothing.
 *
 * The last finish is an ordered read of one entry, not `max()`: with statistics that have
 * not seen the device's finished rows yet (right after a burst of new work), the planner
 * ran `max()` as an aggregate over every operation the device ever claimed (1 ms and 600
 * pages at 500 claimed); the ordered form can only be the backward probe of
 * `operations_device_finished`.
 */
export async function deviceQueueState(em: EntityManager, deviceId: string): Promise<DeviceQueueState> {
  const r = await one<StateRow>(
    em,
    `select
${STATE_COLUMNS}`,
    [deviceId, deviceId, deviceId, deviceId],
  );
  return toState(r);
}

/**
 * The claim's read, in its transaction, in one statement: `deviceQueueState` and the
 * device's oldest queued operation, locked, skipping rows another poll or a cancel holds,
 * so concurrent pollers never wait on each other and never take the same row. A poll
 * without work (or in its cooldown) ends its transaction having written nothing.
 */
export async function pollDevice(
  em: EntityManager,
  deviceId: string,
): Promise<{ state: DeviceQueueState; next: OperationRecord | undefined }> {
  const r = await one<StateRow>(
    em,
    `with next as (
       select ${OPERATION_COLUMNS}, ${LOCKED_AT} from dispatch.operations o
        where o.device_id = ? and o.status = 'queued'
        order by o.created_at, o.operation_id
        limit 1
        for update of o skip locked
     )
     select s.*, next.* from (select
${STATE_COLUMNS}) s
     left join next on true`,
    [deviceId, deviceId, deviceId, deviceId, deviceId],
  );
  const { has_running, has_queued, last_finished_at, frozen, ...next } = r!;
  return {
    state: toState({ has_running, has_queued, last_finished_at, frozen }),
    next: (next as Record<string, unknown>).operation_id ? toRecord(next) : undefined,
  };
}

/** Whether a device has work besides the operation it reports on. */
export interface OtherWork {
  has_running: boolean;
  has_queued: boolean;
}

/**
 * The outcome's lock, in one statement: the reported operation, locked with its clock
 * (`LOCKED_AT`; the lock orders the outcome against a concurrent proof or cancel), and
 * whether the reporting device has other work, running or queued: once the outcome has moved
 * this operation off `running`, that is what the device's next poll reads, so a device left
 * with nothing is remembered idle and that poll costs no transaction. Its snapshot is taken
 * after the caller's idle mark, like a poll's: work queued after it is announced after the
 * mark, which keeps the device from being remembered idle.
 */
export async function lockReported(
  em: EntityManager,
  operationId: string,
  deviceId: string,
): Promise<{ before: OperationRecord | undefined; other: OtherWork }> {
  const r = await one<Record<string, unknown>>(
    em,
    `select ${OPERATION_COLUMNS}, ${LOCKED_AT},
            exists (select 1 from dispatch.operations x
                     where x.device_id = ? and x.status = 'running' and x.operation_id <> o.operation_id)
              as device_has_running,
            exists (select 1 from dispatch.operations x
                     where x.device_id = ? and x.status = 'queued' and x.operation_id <> o.operation_id)
              as device_has_queued
       from dispatch.operations o
      where o.operation_id = ?
        for update of o`,
    [deviceId, deviceId, operationId],
  );
  if (!r) return { before: undefined, other: { has_running: false, has_queued: false } };
  const { device_has_running, device_has_queued, ...row } = r;
  return {
    before: toRecord(row),
    other: { has_running: Boolean(device_has_running), has_queued: Boolean(device_has_queued) },
  };
}

/**
 * Makes the locked operation running on its device, with the outbox rows of the events
 * `events` says of it (one statement: `updateOperation`). The partial unique index
 * `operations_one_running_per_device` refuses a second running operation on one device
 * whatever the code above did: the loser gets `busy` and its transaction must roll back.
 * The row is locked and `op` is what it holds (`updateOperation`).
 */
export async function markRunning(
  em: EntityManager,
  op: OperationRecord,
  ussdString: string,
  startedAt: Date,
  events: (claimed: OperationRecord) => OutboxEvent[],
): Promise<{ claimed: OperationRecord } | { busy: true }> {
  try {
    return {
      claimed: await updateOperation(
        em,
        op,
        { status: "running", started_at: startedAt, ussd_string: ussdString },
        events,
      ),
    };
  } catch (err) {
    if (isUniqueViolation(err, "operations_one_running_per_device")) return { busy: true };
    throw err;
  }
}

export interface DeviceOperationFilter {
  device_id: string;
  since: Date | null;
  limit: number;
}

/** Operations the device claimed, most recently changed first. */
export async function listClaimedByDevice(em: EntityManager, f: DeviceOperationFilter): Promise<OperationRecord[]> {
  const params: unknown[] = [f.device_id];
  let where = `o.device_id = ? and o.started_at is not null`;
  if (f.since) {
    where += ` and o.updated_at >= ?`;
    params.push(f.since);
  }
  const found = await rows<Record<string, unknown>>(
    em,
    `select ${OPERATION_COLUMNS} from dispatch.operations o where ${where}
      order by o.updated_at desc, o.operation_id desc limit ${f.limit}`,
    params,
  );
  return found.map(toRecord);
}

/** Records a handset's status from fleet; only a frozen handset keeps a row. */
export async function recordDeviceStatus(em: EntityManager, deviceId: string, status: string, at: Date): Promise<void> {
  if (status === "frozen") {
    await em.execute(
      `insert into dispatch.devices (device_id, status, changed_at) values (?, ?, ?)
       on conflict (device_id) do update set status = excluded.status, changed_at = excluded.changed_at`,
      [deviceId, status, at],
    );
  } else {
    await em.execute(`delete from dispatch.devices where device_id = ?`, [deviceId]);
  }
}
