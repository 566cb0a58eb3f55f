import { create, toBinary } from "@bufbuild/protobuf";
import { big, ts, type Caller } from "@transferops/kit";
import {
  OperationSchema,
  EvidenceSummarySchema,
  type Operation,
} from "@transferops/kit/gen/transferops/dispatch/v1/dispatch_pb";
import { checkAttachable, decideDismiss, dismissReasonOf } from "../domain/dismissal.ts";
import type { MessageRecord } from "../domain/message.ts";
import { refusal } from "../domain/reasons.ts";
import { provenBalanceOf } from "../domain/outcomes.ts";
import { proofStanding } from "../domain/proof-standing.ts";
import { needsGrant, requireBoard, scopeOf, type Scope } from "../domain/scope.ts";
import { limitOf, windowOf } from "../domain/window.ts";
import { messageDismissed, messageLinked } from "../events/messages.ts";
import {
  dismissMessage,
  findMessage,
  finishCorrelation,
  listMovements,
  listUnmatched,
  lockSimMessage,
  type EvidenceRecord,
} from "../store/messages.ts";
import { addToDay } from "../store/reconciliations.ts";
import { pushBalance } from "./correlate.ts";
import type { FlowDeps } from "./ports.ts";

/** The caller's scope: supervisors and admins the fleet, an agent the SIMs of its grant. */
export async function boardScope(
  deps: FlowDeps,
  caller: Caller | undefined,
): Promise<{ caller: Caller; scope: Scope }> {
  const c = requireBoard(caller);
  if (!needsGrant(c)) return { caller: c, scope: scopeOf(c, []) };
  const grant = await deps.fleet.getAgentScope({ agentId: c.agentId });
  if (!grant.exists || !grant.isActive) throw refusal("agent_inactive", "This agent is inactive or gone");
  return { caller: c, scope: scopeOf(c, grant.allowedSimIds) };
}

/** The `days`/`from`/`to`/`all` of a list request (common.v1.DayWindow). */
type DayWindow = { days: number; from: string; to: string; all: boolean };

const windowRequest = (w: DayWindow | undefined) => ({
  days: w?.days ?? 0,
  from: w?.from ?? "",
  to: w?.to ?? "",
  all: w?.all ?? false,
});

export async function unmatchedEvidence(
  deps: FlowDeps,
  req: { caller?: Caller; unmatched: boolean; limit: number; window?: DayWindow },
): Promise<EvidenceRecord[]> {
  const { scope } = await boardScope(deps, req.caller);
  if (!req.unmatched) throw refusal("unmatched_required", "unmatched must be true", { unmatched: req.unmatched });
  const limit = limitOf(req.limit);
  const window = windowOf(windowRequest(req.window), new Date());
  return listUnmatched(deps.db.em(), scope, window, limit);
}

export async function movements(
  deps: FlowDeps,
  req: { caller?: Caller; limit: number; window?: DayWindow },
): Promise<EvidenceRecord[]> {
  const { scope } = await boardScope(deps, req.caller);
  const limit = limitOf(req.limit);
  const window = windowOf(windowRequest(req.window), new Date());
  return listMovements(deps.db.em(), scope, window, limit);
}

/** Idempotent: a second dismissal answers the same and keeps the first reason. */
export async function dismiss(
  deps: FlowDeps,
  req: { caller?: Caller; evidenceId: string; reason: string },
): Promise<void> {
  const { caller, scope } = await boardScope(deps, req.caller);
  const reason = dismissReasonOf(req.reason);
  const found = await findMessage(deps.db.em(), req.evidenceId);
  decideDismiss(req.evidenceId, found, scope);
  const wrote = await deps.db.tx(async (em) => {
    const m = await lockSimMessage(em, found!.sim_id, req.evidenceId);
    if (decideDismiss(req.evidenceId, m, scope) === "already") return false;
    const updated = await dismissMessage(em, m!.id, reason, caller.agentId);
    await messageDismissed(em, updated);
    await addToDay(em, m!, updated);
    return true;
  });
  if (wrote) deps.published();
}

/**
 * A person attaches a message to an operation. Dispatch first says whether the caller may
 * act on the operation (404 for an unknown operation and for one outside the caller's scope
 * alike), before anything is said of the message; evidence then answers 404 (an unknown
 * message, or one on a SIM outside the caller's scope: an agent's grant) and 409 (the message already names an operation, not said which); dispatch then
 * answers 409 (terminal), 422 (another SIM, or a message that could not have proved the
 * operation by itself: domain/attach-proof.ts there), and confirms. Under the SIM's lock, so
 * correlation of the same message cannot run at the same time. An attached proof writes the
 * balance it printed to the SIM's mirror, as an automatic match does (pushBalance).
 */
export async function attach(
  deps: FlowDeps,
  req: { caller?: Caller; operationId: string; evidenceId: string },
): Promise<{ operation: Operation; evidence: MessageRecord }> {
  const { caller, scope } = await boardScope(deps, req.caller);
  await deps.dispatch.attachEvidence({ caller, operationId: req.operationId, scopeOnly: true });
  const found = checkAttachable(req.evidenceId, await findMessage(deps.db.em(), req.evidenceId), scope);
  const result = await deps.db
    .tx(async (em) => {
      const m = checkAttachable(
        req.evidenceId,
        await lockSimMessage(em, found.sim_id, req.evidenceId),
        scope,
      ) as MessageRecord;
      const res = await deps.dispatch.attachEvidence({
        caller,
        operationId: req.operationId,
        messageId: m.id,
        simId: m.sim_id,
        evidence: summaryOf(m),
        senderIsOperator: proofStanding(m).sender_is_operator,
        counterpartyMsisdn: m.counterparty_msisdn ?? undefined,
      });
      const operation = res.operation;
      if (!operation?.operationId) throw new Error(`dispatch attached message ${m.id} without returning the operation`);
      // The update and the day's addition in one statement.
      const updated = await finishCorrelation(em, m, {
        outcome: "attached",
        is_ambiguous: m.is_ambiguous,
        operation_id: operation.operationId,
        link: "proof",
        linked_by: caller.agentId,
        operation_snapshot: toBinary(OperationSchema, operation),
        // The proof's balance goes to fleet's mirror as a match's does (after the commit);
        // one already sent (a crash between the two services, attached again) is not resent.
        balance_state: m.balance_state === "none" && provenBalanceOf(m) ? "pending" : m.balance_state,
      });
      await messageLinked(em, updated);
      return { operation, evidence: updated };
    })
    .catch((err: unknown) => {
      // One proving message per operation is a constraint: a second one is a conflict, never a second link.
      if (err instanceof Error && err.message.includes("messages_one_proof_per_operation")) {
        throw refusal("operation_already_proven", `Operation ${req.operationId} is already proven by another message`, {
          operation_id: req.operationId,
          evidence_id: req.evidenceId,
        });
      }
      throw err;
    });
  deps.published();
  return { ...result, evidence: await pushBalance(deps, result.evidence) };
}

function summaryOf(m: MessageRecord) {
  return create(EvidenceSummarySchema, {
    operatorRef: m.operator_ref ?? undefined,
    amount: BigInt(m.kind === "BAL" ? (m.balance_after ?? 0) : (m.amount ?? 0)),
    fee: big(m.fee),
    balanceAfter: big(m.balance_after),
    rawText: m.raw_text,
    receivedAt: ts(m.received_at),
    kind: m.kind ?? undefined,
    isAmbiguous: m.is_ambiguous,
  });
}
