import { one, rows, type EntityManager } from "@transferops/kit";
import { unprovenOf } from "./migrations/Migration0012UnprovenCounts.ts";
import { fromRow, type OperationRecord } from "./operations.ts";

/** What a SIM's history shows of an operation (flows/mappers.ts, `toSimOperation`). */
export type SimOperationRecord = Pick<
  OperationRecord,
  "operation_id" | "status" | "op_type" | "montant" | "msisdn_dest" | "created_at" | "finished_at"
>;

/**
 * Its columns, and no more: a page of 250 read every operation column (46, and a probe of the
 * retries for each), of which the row shows 7; each column a row is a parse in the driver.
 */
const SIM_OPERATION_COLUMNS = `o.operation_id, o.status, o.op_type, o.montant, o.msisdn_dest, o.created_at, o.finished_at`;

export interface SimActivity {
  queued_or_running: number;
  total_operations: number;
  total_confirmed: number;
  total_failed: number;
  total_no_evidence: number;
  operations: SimOperationRecord[];
}

/** The SIM's totals from its row (Migration0011SimCounts), what is queued or running from the in-flight index. */
const SIM_TOTALS = `select c.operations, c.confirmed, c.failed, c.no_evidence, c.counted,
       (select count(*) from dispatch.operations where sim_id = ? and status in ('queued', 'running')) as queued_or_running
     from (select 1) one left join dispatch.sim_operation_counts c on c.sim_id = ?`;

/** A SIM not counted yet (Migration0011SimCounts, until `countSimHistory` reaches it): its whole history. */
const SIM_TOTALS_FROM_ROWS = `select count(*) as operations,
       count(*) filter (where status = 'confirmed') as confirmed,
       count(*) filter (where status = 'failed') as failed,
       count(*) filter (where status = 'no_evidence') as no_evidence,
       coalesce(sum(${unprovenOf("operations")}), 0) as unproven
     from dispatch.operations where sim_id = ?`;

/**
 * A SIM's totals and its newest operations: one row of counts and the in-flight entries of the
 * SIM, then a page of `operations_sim_created`, whatever its history. No row: the SIM never had
 * an operation.
 */
export async function simActivity(em: EntityManager, simId: string, limit: number): Promise<SimActivity> {
  const totals = (await one<Record<string, unknown>>(em, SIM_TOTALS, [simId, simId]))!;
  const counts =
    totals.counted === false ? await one<Record<string, unknown>>(em, SIM_TOTALS_FROM_ROWS, [simId]) : totals;
  const found = await rows<Record<string, unknown>>(
    em,
    `select ${SIM_OPERATION_COLUMNS} from dispatch.operations o where o.sim_id = ?
      order by o.created_at desc, o.operation_id desc limit ${limit}`,
    [simId],
  );
  return {
    queued_or_running: Number(totals.queued_or_running ?? 0),
    total_operations: Number(counts?.operations ?? 0),
    total_confirmed: Number(counts?.confirmed ?? 0),
    total_failed: Number(counts?.failed ?? 0),
    total_no_evidence: Number(counts?.no_evidence ?? 0),
    operations: found.map((raw) => fromRow<SimOperationRecord>(raw)),
  };
}

/**
 * Counts one SIM the migration left uncounted (Migration0011SimCounts), in the caller's
 * transaction; false when none is left. The SIM's row is locked first: a transaction that
 * changed the SIM's operations and took the row at its commit has ended, and one that has not
 * committed waits for this one at its commit and then adds its change to what this counted
 * without it. The count is a statement of its own, so it sees every change committed before
 * the lock. Not `skip locked`: a row a committing writer holds is waited for (milliseconds), not
 * left uncounted; a replica counting beside this one waits for the row it counts and then finds
 * it counted and takes the next.
 */
export async function countSimHistory(em: EntityManager): Promise<boolean> {
  const next = await one<{ sim_id: string }>(
    em,
    `select sim_id from dispatch.sim_operation_counts where not counted order by sim_id limit 1 for update`,
  );
  if (!next) return false;
  await em.execute(
    `update dispatch.sim_operation_counts c
        set operations = n.operations, confirmed = n.confirmed, failed = n.failed, no_evidence = n.no_evidence,
            unproven = n.unproven, counted = true
       from (${SIM_TOTALS_FROM_ROWS}) n
      where c.sim_id = ?`,
    [next.sim_id, next.sim_id],
  );
  return true;
}

/** Deletes every operation, every stored proof answer and the SIMs' counts (the reset route); the queue is the operations table. */
export async function deleteAllOperations(em: EntityManager): Promise<{ operations: number; proofs: number }> {
  const proofs = (await em.execute(`delete from dispatch.proofs returning 1`)) as unknown[];
  const operations = (await em.execute(`delete from dispatch.operations returning 1`)) as unknown[];
  await em.execute(`delete from dispatch.sim_operation_counts`);
  return { operations: operations.length, proofs: proofs.length };
}

/**
 * The sweep's backlog: operations past their evidence window not swept yet (the
 * `operations_awaiting_evidence` range), and the unproven backlog (`no_evidence` transfers) from
 * the SIMs' counts rows (Migration0012UnprovenCounts), a row a SIM whatever the history; a SIM
 * not counted yet (Migration0011SimCounts) from its rows, operations of no SIM (a deleted SIM's)
 * from `operations_unproven_no_sim`.
 */
export async function sweepBacklog(
  em: EntityManager,
  now: Date,
): Promise<{ past_window_not_swept: number; unproven_waiting: number }> {
  const r = await one<Record<string, unknown>>(
    em,
    `select
       (select count(*) from dispatch.operations where status = 'awaiting_evidence' and evidence_expires_at <= ?) as past,
       (select coalesce(sum(unproven), 0) from dispatch.sim_operation_counts where counted)
       + (select count(*) from dispatch.operations o
           where o.sim_id in (select sim_id from dispatch.sim_operation_counts where not counted)
             and o.status = 'no_evidence' and ${unprovenOf("o")} = 1)
       + (select count(*) from dispatch.operations where sim_id is null and ${unprovenOf("operations")} = 1) as unproven`,
    [now],
  );
  return { past_window_not_swept: Number(r?.past ?? 0), unproven_waiting: Number(r?.unproven ?? 0) };
}
