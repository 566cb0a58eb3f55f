import { one, rows, type EntityManager } from "@transferops/kit";
import { date, dateOrNull } from "./values.ts";

export interface NotificationRecord {
  id: string;
  kind: string;
  severity: string;
  message: string;
  sim_id: string | null;
  device_id: string | null;
  operation_id: string | null;
  context: Record<string, unknown>;
  raised_at: Date;
  acknowledged_at: Date | null;
  acknowledged_by: string | null;
}

const toNotification = (r: NotificationRecord): NotificationRecord => ({
  ...r,
  raised_at: date(r.raised_at),
  acknowledged_at: dateOrNull(r.acknowledged_at),
});
const notification = (r: NotificationRecord | undefined) => (r ? toNotification(r) : undefined);

const COLUMNS = `id, kind, severity, message, sim_id, device_id, operation_id, context, raised_at, acknowledged_at, acknowledged_by`;

/** Stores an alert once per dedupe key; undefined when the key was already stored. */
export async function insertNotification(
  em: EntityManager,
  n: Omit<NotificationRecord, "acknowledged_at" | "acknowledged_by"> & { dedupe_key: string },
): Promise<NotificationRecord | undefined> {
  return notification(
    await one<NotificationRecord>(
      em,
      `insert into fleet.notifications (id, kind, severity, message, sim_id, device_id, operation_id, context, raised_at, dedupe_key)
     values (?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?, ?) on conflict (dedupe_key) do nothing returning ${COLUMNS}`,
      [
        n.id,
        n.kind,
        n.severity,
        n.message,
        n.sim_id,
        n.device_id,
        n.operation_id,
        JSON.stringify(n.context),
        n.raised_at,
        n.dedupe_key,
      ],
    ),
  );
}

/**
 * Closes the open notification of an alert whose condition no longer holds: acknowledged at
 * the resolution time by nobody (`acknowledged_by` stays null: the system, not a person), with
 * the reason added to its context. A notification already acknowledged by a person keeps its
 * acknowledgement. Returns whether one was closed.
 */
export async function resolveNotification(
  em: EntityManager,
  r: { dedupe_key: string; reason: string; resolved_at: Date },
): Promise<boolean> {
  const closed = (await em.execute(
    `update fleet.notifications set acknowledged_at = ?,
       context = context || jsonb_build_object('resolved', true, 'resolution', ?::text, 'resolved_at', ?::text)
     where dedupe_key = ? and acknowledged_at is null returning id`,
    [r.resolved_at, r.reason, r.resolved_at.toISOString(), r.dedupe_key],
  )) as unknown[];
  return closed.length > 0;
}

export async function listNotifications(
  em: EntityManager,
  f: { acknowledged?: boolean; limit: number },
): Promise<NotificationRecord[]> {
  const where =
    f.acknowledged === undefined
      ? ""
      : f.acknowledged
        ? "where acknowledged_at is not null"
        : "where acknowledged_at is null";
  return (
    await rows<NotificationRecord>(
      em,
      `select ${COLUMNS} from fleet.notifications ${where} order by raised_at desc, id limit ?`,
      [f.limit],
    )
  ).map(toNotification);
}

/** Acknowledges once: a second acknowledgement keeps the first time and admin. */
export async function acknowledgeNotification(
  em: EntityManager,
  id: string,
  by: string,
): Promise<NotificationRecord | undefined> {
  await em.execute(
    `update fleet.notifications set acknowledged_at = now(), acknowledged_by = ? where id = ? and acknowledged_at is null`,
    [by, id],
  );
  return notification(
    await one<NotificationRecord>(em, `select ${COLUMNS} from fleet.notifications where id = ?`, [id]),
  );
}

export async function countOpenNotifications(em: EntityManager): Promise<number> {
  const r = await one<{ n: number }>(
    em,
    `select count(*)::int as n from fleet.notifications where acknowledged_at is null`,
  );
  return r?.n ?? 0;
}
