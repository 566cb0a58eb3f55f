import { one, rows, type EntityManager } from "@transferops/kit";
import type { ProofCandidate } from "../domain/index.ts";
import { LOCKED_AT, OPERATION_COLUMNS, toRecord, type OperationRecord } from "./operations.ts";
import { toDate } from "./sql.ts";

import { PROOF_INSERT, proofValues, type NewProof, type ProofOutcome } from "./proof-rows.ts";

export type { NewProof, ProofOutcome };

export interface ProofRecord {
  message_id: string;
  sim_id: string;
  outcome: ProofOutcome;
  operation_id: string | null;
  candidate_operation_ids: string[];
  created_at: Date;
}

function toProof(r: Record<string, unknown>): ProofRecord {
  const ids = r.candidate_operation_ids;
  return {
    message_id: String(r.message_id),
    sim_id: String(r.sim_id),
    outcome: r.outcome as ProofOutcome,
    operation_id: (r.operation_id as string | null) ?? null,
    candidate_operation_ids: Array.isArray(ids) ? (ids as string[]) : [],
    created_at: toDate(r.created_at)!,
  };
}

/**
 * Serialises every proof of one message: the first caller takes a transaction-scoped
 * advisory lock on the message id, a concurrent repeat waits for it and then finds the
 * stored answer. (The primary key of `proofs` would also refuse a second row.)
 */
export async function lockMessage(em: EntityManager, messageId: string): Promise<void> {
  await em.execute(`select pg_advisory_xact_lock(hashtextextended(?, 7301))`, [messageId]);
}

/** The operation a message already proves, if any. */
export async function operationProvenBy(em: EntityManager, messageId: string): Promise<string | undefined> {
  const found = await rows<{ operation_id: string }>(
    em,
    `select operation_id from dispatch.operations where evidence_message_id = ?`,
    [messageId],
  );
  return found[0]?.operation_id;
}

/**
 * What a message was already answered, in one read (after `lockMessage`, so a concurrent
 * first proof of the message has committed): its stored proof, and the operation another
 * message already confirmed on this SIM with this operator reference and amount (an
 * operator's reference names one transaction), when `restating` names one to look for.
 */
export async function answeredBefore(
  em: EntityManager,
  messageId: string,
  restating: { sim_id: string; operator_ref: string; amount: number } | null,
): Promise<{ stored: ProofRecord | undefined; restated: OperationRecord | undefined }> {
  const r = await one<Record<string, unknown>>(
    em,
    `select (select to_jsonb(p) from dispatch.proofs p where p.message_id = ?) as stored_proof, r.*
       from (select 1) as one
       left join lateral (
         select ${OPERATION_COLUMNS} from dispatch.operations o
          where o.sim_id = ? and o.status = 'confirmed' and o.montant = ? and o.evidence_operator_ref = ?
            and o.evidence_message_id <> ?
          limit 1) as r on true`,
    [messageId, restating?.sim_id ?? null, restating?.amount ?? null, restating?.operator_ref ?? null, messageId],
  );
  const { stored_proof: stored, ...restated } = r ?? {};
  return {
    stored: stored ? toProof(stored as Record<string, unknown>) : undefined,
    restated: restated.operation_id ? toRecord(restated) : undefined,
  };
}

/** Stores a message's answer (one that confirms an operation is stored with its change: `updateOperation`). */
export async function insertProof(em: EntityManager, p: NewProof): Promise<void> {
  await em.execute(PROOF_INSERT(), proofValues(p));
}

/**
 * Locks the operations a message on this SIM could prove (every provable status; the
 * domain applies kind, amount, time, late window and origin rules). Locked in id order
 * so that two messages racing over the same operations cannot deadlock; a row another
 * message just confirmed is re-read after its lock is released and drops out.
 */
export async function lockProofCandidates(
  em: EntityManager,
  simId: string,
  statuses: readonly string[],
  opTypes: readonly string[],
  amount: number | null,
): Promise<(ProofCandidate & { record: OperationRecord })[]> {
  if (opTypes.length === 0) return [];
  const params: unknown[] = [simId, [...statuses], [...opTypes]];
  let amountSql = "";
  if (amount !== null) {
    amountSql = "and o.montant = ?";
    params.push(amount);
  }
  const found = await rows<Record<string, unknown>>(
    em,
    `select ${OPERATION_COLUMNS}, ${LOCKED_AT} from dispatch.operations o
      where o.sim_id = ? and o.status in (?) and o.op_type in (?) ${amountSql}
      order by o.operation_id
      for update of o`,
    params,
  );
  return found.map((raw) => {
    const record = toRecord(raw);
    return {
      operation_id: record.operation_id,
      status: record.status,
      origin: record.origin,
      op_type: record.op_type,
      montant: record.montant,
      msisdn_dest: record.msisdn_dest,
      created_at: record.created_at,
      finished_at: record.finished_at,
      record,
    };
  });
}

/** Which dialled debit a proof looks for when no active operation matches it. */
export type DialledDebit = "failed" | "confirmed_on_word";

const DIALLED_DEBIT: Record<DialledDebit, { where: string; since: string }> = {
  // Contradicted: failed or rejected, changed within the window, not contradicted yet
  // (store/operations.ts `HELD_DEBITS` holds such a debit).
  failed: {
    where: `o.status in ('failed', 'rejected') and o.contradicting_message_id is null`,
    since: "o.updated_at",
  },
  // Confirmed by a person (settled `arrived`, arbitrated `confirmed`) with no message yet,
  // finished within the window: bounded by `operations_sim_finished`.
  confirmed_on_word: {
    where: `o.status = 'confirmed' and o.evidence_message_id is null and o.decided_at is not null
        and o.finished_at is not null`,
    since: "o.finished_at",
  },
};

/**
 * The operation a proof of `amount` may be the text of although no active operation matches it,
 * locked: the SIM's newest debit of that amount that was handed to a handset (or dialled by hand)
 * within `withinS` seconds, to one of `msisdns` when the message names a number, and in the
 * state `which` names: failed or rejected (the proof contradicts it), or confirmed on word (the
 * proof is its text).
 */
export async function lockDialledDebit(
  em: EntityManager,
  which: DialledDebit,
  q: { simId: string; opTypes: readonly string[]; amount: number; msisdns: readonly string[] | null; withinS: number },
): Promise<OperationRecord | undefined> {
  if (q.opTypes.length === 0) return undefined;
  const { where, since } = DIALLED_DEBIT[which];
  const found = await rows<Record<string, unknown>>(
    em,
    `select ${OPERATION_COLUMNS}, ${LOCKED_AT} from dispatch.operations o
      where o.sim_id = ? and ${where} and o.op_type in (?) and o.montant = ?
        and ${since} > clock_timestamp() - make_interval(secs => ?)
        and (o.started_at is not null or o.origin = 'matching')
        ${q.msisdns ? "and o.msisdn_dest in (?)" : ""}
      order by ${since} desc limit 1
      for update of o`,
    [q.simId, [...q.opTypes], q.amount, q.withinS, ...(q.msisdns ? [[...q.msisdns]] : [])],
  );
  return found[0] && toRecord(found[0]);
}

/** The queued or running retry of an operation, locked. */
export async function lockRetryOf(em: EntityManager, operationId: string): Promise<OperationRecord | undefined> {
  const found = await rows<Record<string, unknown>>(
    em,
    `select ${OPERATION_COLUMNS}, ${LOCKED_AT} from dispatch.operations o
      where o.parent_operation_id = ? for update of o`,
    [operationId],
  );
  return found[0] && toRecord(found[0]);
}

/**
 * The SIM's operations in these statuses and types sent to one of these numbers, any amount
 * (amount divergence). Not locked: a divergence changes no operation.
 */
export async function proofCandidatesTo(
  em: EntityManager,
  simId: string,
  statuses: readonly string[],
  opTypes: readonly string[],
  msisdns: readonly string[],
): Promise<ProofCandidate[]> {
  if (opTypes.length === 0 || msisdns.length === 0) return [];
  const found = await rows<Record<string, unknown>>(
    em,
    `select ${OPERATION_COLUMNS} from dispatch.operations o
      where o.sim_id = ? and o.status in (?) and o.op_type in (?) and o.msisdn_dest in (?)
      order by o.created_at desc limit 20`,
    [simId, [...statuses], [...opTypes], [...msisdns]],
  );
  return found.map((raw) => {
    const r = toRecord(raw);
    return {
      operation_id: r.operation_id,
      status: r.status,
      origin: r.origin,
      op_type: r.op_type,
      montant: r.montant,
      msisdn_dest: r.msisdn_dest,
      created_at: r.created_at,
      finished_at: r.finished_at,
    };
  });
}
