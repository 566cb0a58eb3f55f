import { create, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { big, ts, type EntityManager } from "@transferops/kit";
import { OperationSchema } from "@transferops/kit/gen/transferops/dispatch/v1/dispatch_pb";
import { ProveOperationRequestSchema } from "@transferops/kit/gen/transferops/dispatch/v1/dispatch_service_pb";
import type { MessageRecord } from "../domain/message.ts";
import { matchValueOf, outcomeOfProof, provenBalanceOf } from "../domain/outcomes.ts";
import { divergenceAlert, messageCorrelated, messageLinked } from "../events/messages.ts";
import {
  findMessage,
  findProofByRef,
  finishCorrelation,
  lockMessage,
  lockSimMessage,
  recordAttemptFailure,
  recordBalance,
  type Correlation,
} from "../store/messages.ts";
import { checkChain } from "./chain.ts";
import type { FlowDeps } from "./ports.ts";
import { KeyedQueue } from "./serial.ts";

/** One correlation per SIM at a time in this process (see KeyedQueue): the SIM's lock orders them anyway. */
const bySim = new KeyedQueue();

/**
 * Finishes the correlation of a stored message (rules 5 to 7 of outcomes.ts) and returns it
 * as stored afterwards. Runs under the SIM's lock, from the restatement check to the final
 * update, so a restatement is exact and copies of one message racing each other see one
 * result. Dispatch proves idempotently on the message id: when this step dies after
 * dispatch confirmed, the retry asks again and gets the same operation.
 *
 * When dispatch cannot be reached the message stays `pending` (the re-drive or the next
 * submission of the same message finishes it) and is returned as such.
 */
export async function correlateMessage(deps: FlowDeps, before: MessageRecord): Promise<MessageRecord | undefined> {
  const { db, log } = deps;
  // `before` as the caller read it: the row is read again under its lock below.
  if (before.state === "done") return before;
  const messageId = before.id;
  let done: MessageRecord | undefined;
  try {
    done = await bySim.run(before.sim_id, () =>
      db.tx(async (em) => {
        // The SIM's lock, then the message's (one statement); then the rest, read after both.
        const m = await lockSimMessage(em, before.sim_id, messageId);
        if (!m || m.state === "done") return m;
        const c = await decide(deps, em, m);
        await deps.hooks?.afterProof?.(m.id);
        // The update and the day's addition in one statement.
        const updated = await finishCorrelation(em, m, c);
        await messageCorrelated(em, updated);
        if (updated.operation_id) await messageLinked(em, updated);
        // A contradiction's alert is dispatch's (it names who decided the operation).
        if (updated.outcome === "divergent" && updated.link !== "contradiction") {
          await divergenceAlert(em, updated, c.divergentFrom);
        }
        await checkChain(em, updated);
        return updated;
      }),
    );
  } catch (err) {
    log.warn({ err, message_id: messageId }, "correlation did not finish; the message stays pending");
    await recordAttemptFailure(db.em(), messageId, errorText(err)).catch(() => undefined);
    return findMessage(db.em(), messageId);
  }
  deps.published();
  return done;
}

type Decision = Correlation & { divergentFrom?: { operationId: string; montant: bigint; msisdnDest: string } };

async function decide(deps: FlowDeps, em: EntityManager, m: MessageRecord): Promise<Decision> {
  const unlinked: Decision = {
    outcome: "orphan",
    is_ambiguous: false,
    operation_id: null,
    link: null,
    operation_snapshot: null,
    balance_state: "none",
  };
  // Rule 5: the operator repeated a reference already proved on this SIM.
  if (m.operator_ref) {
    const proof = await findProofByRef(em, m.sim_id, m.operator_ref, m.id);
    if (proof) {
      return {
        ...unlinked,
        outcome: "restated",
        operation_id: proof.operation_id,
        link: "restatement",
        operation_snapshot: proof.operation_snapshot,
      };
    }
  }
  // Rule 6: nothing to match by exactly.
  const value = matchValueOf(m);
  if (value === null) return unlinked;
  // Rule 7: dispatch picks the candidate under its row locks and confirms in one transaction.
  const answer = await deps.dispatch.proveOperation(proveRequest(m, value));
  return decisionOfProof(m, answer, unlinked);
}

/** Rule 7's question to dispatch: the message's reading, matched by `value`. */
function proveRequest(m: MessageRecord, value: number) {
  return create(ProveOperationRequestSchema, {
    messageId: m.id,
    simId: m.sim_id,
    kind: m.kind ?? "",
    amount: BigInt(value),
    fee: big(m.fee),
    balanceAfter: big(m.balance_after),
    operatorRef: m.operator_ref ?? "",
    counterpartyMsisdn: m.counterparty_msisdn ?? "",
    rawText: m.raw_text,
    receivedAt: ts(m.received_at),
    deviceReceivedAt: ts(m.device_received_at),
    isAmbiguousHint: false,
  });
}

type ProveAnswer = Awaited<ReturnType<FlowDeps["dispatch"]["proveOperation"]>>;

/** Dispatch's answer as this message's correlation: linked, ambiguous, divergent or an orphan. */
function decisionOfProof(m: MessageRecord, answer: ProveAnswer, unlinked: Decision): Decision {
  const outcome = outcomeOfProof(answer.outcome);
  if (answer.outcome === "contradicting") {
    // The proof of an operation dispatch had failed or rejected: linked to it, not an orphan.
    const op = answer.operation;
    if (!op?.operationId) throw new Error(`dispatch contradicted with message ${m.id} without naming the operation`);
    return {
      ...unlinked,
      outcome,
      operation_id: op.operationId,
      link: "contradiction",
      operation_snapshot: toBinary(OperationSchema, op),
    };
  }
  switch (outcome) {
    case "confirmed": {
      const op = answer.operation;
      if (!op?.operationId) throw new Error(`dispatch confirmed message ${m.id} without naming the operation`);
      return {
        ...unlinked,
        outcome,
        operation_id: op.operationId,
        link: "proof",
        operation_snapshot: toBinary(OperationSchema, op),
        balance_state: provenBalanceOf(m) ? "pending" : "none",
      };
    }
    case "restated": {
      // Dispatch knew the reference proven by another message this service has not finished.
      const op = answer.operation;
      if (!op?.operationId) throw new Error(`dispatch restated message ${m.id} without naming the operation`);
      return {
        ...unlinked,
        outcome,
        operation_id: op.operationId,
        link: "restatement",
        operation_snapshot: toBinary(OperationSchema, op),
      };
    }
    case "ambiguous":
      return { ...unlinked, outcome, is_ambiguous: true };
    case "divergent":
      return {
        ...unlinked,
        outcome,
        divergentFrom: answer.operation
          ? {
              operationId: answer.operation.operationId,
              montant: answer.operation.montant,
              msisdnDest: answer.operation.msisdnDest,
            }
          : undefined,
      };
    default:
      return unlinked;
  }
}

/**
 * Sends a proof's balance to fleet, observed at the operator's timestamp (fleet never
 * replaces a newer reading, so a repeat is harmless), and records fleet's answer. Fleet
 * unreachable: the balance stays `pending` for the re-drive. A SIM fleet no longer knows,
 * or a reading it refuses, is marked done without a balance.
 */
export async function pushBalance(deps: FlowDeps, m: MessageRecord): Promise<MessageRecord> {
  if (m.balance_state !== "pending") return m;
  try {
    // Under the message's lock: copies of one submission racing each other call fleet once.
    const updated = await deps.db.tx(async (em) => {
      const locked = await lockMessage(em, m.id);
      if (!locked || locked.balance_state !== "pending") return locked;
      await deps.hooks?.beforeBalance?.(m.id);
      return recordBalance(em, m.id, { balance_state: "done", ...(await provenBalance(deps, locked)) });
    });
    return updated ?? m;
  } catch (err) {
    deps.log.warn({ err, message_id: m.id }, "proven balance did not reach fleet; the re-drive sends it");
    await recordAttemptFailure(deps.db.em(), m.id, errorText(err)).catch(() => undefined);
    return (await findMessage(deps.db.em(), m.id)) ?? m;
  }
}

async function provenBalance(
  deps: FlowDeps,
  m: MessageRecord,
): Promise<{ balance: number | null; previous_balance: number | null }> {
  const proven = provenBalanceOf(m);
  if (!proven) return { balance: null, previous_balance: null };
  try {
    const res = await deps.fleet.recordProvenBalance({
      simId: m.sim_id,
      balance: BigInt(proven.balance),
      // A handset clock ahead of ours would date the reading in the future, which fleet refuses.
      observedAt: ts(new Date(Math.min(m.received_at.getTime(), Date.now()))),
      source: proven.source,
      messageId: m.id,
    });
    return {
      balance: res.balance === undefined ? null : Number(res.balance),
      previous_balance: res.previousBalance === undefined ? null : Number(res.previousBalance),
    };
  } catch (err) {
    // Final answers: a SIM fleet no longer knows has no mirror; a reading fleet refuses never
    // becomes acceptable by asking again. Anything else (unreachable) is retried.
    if (err instanceof ConnectError && (err.code === Code.NotFound || err.code === Code.InvalidArgument)) {
      deps.log.warn(
        { err: err.rawMessage, message_id: m.id, sim_id: m.sim_id },
        "fleet refused the proven balance; not retried",
      );
      return { balance: null, previous_balance: null };
    }
    throw err;
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}
