import { rows, type EntityManager } from "@transferops/kit";
import { OPERATION_COLUMNS, toRecord, type OperationRecord } from "./operations.ts";

/**
 * Locks a batch of operations whose evidence window has closed, oldest first, skipping
 * rows a proof or another sweeper holds (a proof that holds one confirms it first; the
 * sweep then never sees it awaiting).
 */
export async function lockExpiredAwaiting(em: EntityManager, now: Date, limit: number): Promise<OperationRecord[]> {
  const found = await rows<Record<string, unknown>>(
    em,
    `select ${OPERATION_COLUMNS} from dispatch.operations o
      where o.status = 'awaiting_evidence' and o.evidence_expires_at <= ?
      order by o.evidence_expires_at, o.operation_id
      limit ${limit}
      for update of o skip locked`,
    [now],
  );
  return found.map(toRecord);
}

/**
 * Locks a batch of operations still running since before `startedBefore` (their handset
 * never reported), oldest first, skipping rows an outcome report or another sweeper holds.
 */
export async function lockStaleRunning(
  em: EntityManager,
  startedBefore: Date,
  limit: number,
): Promise<OperationRecord[]> {
  const found = await rows<Record<string, unknown>>(
    em,
    `select ${OPERATION_COLUMNS} from dispatch.operations o
      where o.status = 'running' and o.started_at <= ?
      order by o.started_at, o.operation_id
      limit ${limit}
      for update of o skip locked`,
    [startedBefore],
  );
  return found.map(toRecord);
}
