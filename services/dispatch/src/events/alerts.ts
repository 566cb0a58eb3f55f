import { raiseAlert as publish, type Alert as KitAlert, type EntityManager } from "@transferops/kit";

export type Alert = KitAlert & {
  kind:
    | "sim_absent"
    | "evidence_divergent"
    | "proof_contradicts_decision"
    | "dialled_after_cancel"
    | "retry_chain_paid_twice";
};

/** Raises an alert on the `alerts` topic (fleet turns it into a notification), in the caller's transaction. */
export const raiseAlert = (em: EntityManager, alert: Alert): Promise<void> => publish(em, "dispatch", alert);
