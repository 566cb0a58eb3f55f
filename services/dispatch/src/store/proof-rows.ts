/** `contradicting`: the message proves an operation that failed or was rejected (flows/proof.ts). */
export type ProofOutcome = "confirmed" | "ambiguous" | "no_candidate" | "divergent" | "contradicting";

/**
 * A message's answer as `dispatch.proofs` keeps it: written on its own (`insertProof`), or,
 * when the message confirms an operation, in the statement that writes the confirmation
 * (`updateOperation`).
 */
export interface NewProof {
  message_id: string;
  sim_id: string;
  outcome: ProofOutcome;
  operation_id: string | null;
  candidate_operation_ids: string[];
}

/** An insert of one proof row, its values `proofValues`' (written only `where` holds). */
export const PROOF_INSERT = (where = "true") =>
  `insert into dispatch.proofs (message_id, sim_id, outcome, operation_id, candidate_operation_ids)
   select ?::text, ?::text, ?::text, ?::uuid, ?::jsonb where ${where}`;

export const proofValues = (p: NewProof): unknown[] => [
  p.message_id,
  p.sim_id,
  p.outcome,
  p.operation_id,
  JSON.stringify(p.candidate_operation_ids),
];
