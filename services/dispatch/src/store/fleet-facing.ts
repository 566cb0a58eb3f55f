import { one, rows, type EntityManager } from "@transferops/kit";
import { OPERATION_COLUMNS, toRecord, type OperationRecord } from "./operations.ts";

export interface SimActivity {
  queued_or_running: number;
  total_operations: number;
  total_confirmed: number;
  total_failed: number;
  total_no_evidence: number;
  operations: OperationRecord[];
}

export async function simActivity(em: EntityManager, simId: string, limit: number): Promise<SimActivity> {
  const counts = await one<Record<string, unknown>>(
    em,
    `select count(*) filter (where status in ('queued', 'running')) as queued_or_running,
            count(*) as total_operations,
            count(*) filter (where status = 'confirmed') as total_confirmed,
            count(*) filter (where status = 'failed') as total_failed,
            count(*) filter (where status = 'no_evidence') as total_no_evidence
       from dispatch.operations where sim_id = ?`,
    [simId],
  );
  const found = await rows<Record<string, unknown>>(
    em,
    `select ${OPERATION_COLUMNS} from dispatch.operations o where o.sim_id = ?
      order by o.created_at desc, o.operation_id desc limit ${limit}`,
    [simId],
  );
  return {
    queued_or_running: Number(counts?.queued_or_running ?? 0),
    total_operations: Number(counts?.total_operations ?? 0),
    total_confirmed: Number(counts?.total_confirmed ?? 0),
    total_failed: Number(counts?.total_failed ?? 0),
    total_no_evidence: Number(counts?.total_no_evidence ?? 0),
    operations: found.map(toRecord),
  };
}

/** Deletes every operation and every stored proof answer (the reset route); the queue is the operations table. */
export async function deleteAllOperations(em: EntityManager): Promise<{ operations: number; proofs: number }> {
  const proofs = (await em.execute(`delete from dispatch.proofs returning 1`)) as unknown[];
  const operations = (await em.execute(`delete from dispatch.operations returning 1`)) as unknown[];
  return { operations: operations.length, proofs: proofs.length };
}

export async function sweepBacklog(
  em: EntityManager,
  now: Date,
): Promise<{ past_window_not_swept: number; unproven_waiting: number }> {
  const r = await one<Record<string, unknown>>(
    em,
    `select
       (select count(*) from dispatch.operations where status = 'awaiting_evidence' and evidence_expires_at <= ?) as past,
       (select count(*) from dispatch.operations where status = 'no_evidence' and op_type not in ('balance', 'mini_statement')) as unproven`,
    [now],
  );
  return { past_window_not_swept: Number(r?.past ?? 0), unproven_waiting: Number(r?.unproven ?? 0) };
}
