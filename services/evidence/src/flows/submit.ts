import { randomUUID } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import { fromTs, type EntityManager } from "@transferops/kit";
import type { SimSummary } from "@transferops/kit/gen/transferops/fleet/v1/fleet_pb";
import type {
  MessageResult,
  SubmitMessagesRequest,
} from "@transferops/kit/gen/transferops/evidence/v1/evidence_service_pb";
import { smsHash } from "../domain/hash.ts";
import type { MessageRecord } from "../domain/message.ts";
import { initialOutcome, routeOf } from "../domain/outcomes.ts";
import { parseMessage, UNRECOGNISED_RULE } from "../domain/parsers/parse.ts";
import type { Operator, Rule } from "../domain/parsers/types.ts";
import { requireDevice, requireSimOfDevice } from "../domain/scope.ts";
import { DEFAULT_SENDER_IDS, isKnownSender } from "../domain/senders.ts";
import { refusalsOf, validateSubmission } from "../domain/submission.ts";
import { wordingDrift } from "../domain/wording-drift.ts";
import { messageCorrelated, messageStored, unknownSenderAlert } from "../events/messages.ts";
import { wordingChangedAlert } from "../events/wording.ts";
import { refusedResult, toResult } from "./mappers.ts";
import { findByHash, insertMessage } from "../store/messages.ts";
import { addToDay } from "../store/reconciliations.ts";
import { unrecognisedCounts } from "../store/wording-drift.ts";
import { checkChain } from "./chain.ts";
import { correlateMessage, pushBalance } from "./correlate.ts";
import type { FlowDeps } from "./ports.ts";
import { SingleFlight } from "./serial.ts";
import { currentTaughtRules, RULES_RECHECK_MS, type CurrentRules } from "./taught.ts";

/**
 * The contract's "Submit SMS messages": 403 unless the SIM is the calling device's; then,
 * message by message in the order the handset received them: deduplicate, parse once,
 * store, correlate, send the proven balance to fleet.
 */
export async function submitMessages(deps: FlowDeps, req: SubmitMessagesRequest): Promise<MessageResult[]> {
  const device = requireDevice(req.caller);
  const incoming = req.messages.map((m) => ({
    sender: m.sender,
    raw: m.raw,
    receivedAt: fromTs(m.receivedAt),
    deviceReceivedAt: fromTs(m.deviceReceivedAt),
    clientMessageId: m.clientMessageId,
  }));
  validateSubmission(req.simId);
  const sim = await lookupSim(deps, req.simId);
  requireSimOfDevice(device, sim && { sim_id: sim.simId, device_id: sim.deviceId }, req.simId);
  const refusals = refusalsOf(incoming);
  const operator = sim!.operator as Operator;
  // The taught rules, checked in the first message's transaction (not in each one's), and
  // again in the next one's when the submission has run for RULES_RECHECK_MS (see
  // currentTaughtRules).
  let taught: CurrentRules | undefined;
  const check = async (em: EntityManager) => (taught = await currentTaughtRules(deps.db, operator, em)).rules;
  const results: MessageResult[] = [];
  for (const [i, m] of incoming.entries()) {
    const refused = refusals[i];
    if (refused) {
      results.push(refusedResult(refused, m.clientMessageId));
      continue;
    }
    const fresh = taught && Date.now() - taught.checkedAt < RULES_RECHECK_MS;
    const { message, duplicate } = await storeMessage(deps, {
      simId: req.simId,
      operator,
      rules: fresh ? taught!.rules : check,
      subscriptionSlot: req.subscriptionSlot ?? null,
      correlate: req.correlate,
      sender: m.sender,
      raw: m.raw,
      receivedAt: m.receivedAt!,
      deviceReceivedAt: m.deviceReceivedAt ?? null,
      clientMessageId: m.clientMessageId ?? null,
    });
    results.push(toResult(await finish(deps, message), duplicate));
  }
  return results;
}

/** Copies of one message in this process share one finish (see SingleFlight). */
const finishing = new SingleFlight();

/** Whatever a stored message still lacks: its correlation, then its balance. */
export function finish(deps: FlowDeps, stored: MessageRecord): Promise<MessageRecord> {
  if (stored.state !== "pending" && stored.balance_state !== "pending") return Promise.resolve(stored);
  return finishing.run(stored.id, () => finishStored(deps, stored));
}

async function finishStored(deps: FlowDeps, stored: MessageRecord): Promise<MessageRecord> {
  let m = stored;
  if (m.state === "pending") m = (await correlateMessage(deps, m)) ?? m;
  if (m.balance_state === "pending") m = await pushBalance(deps, m);
  return m;
}

export interface StoreInput {
  simId: string;
  operator: Operator;
  /**
   * The operator's active taught rules (currentTaughtRules), or how to check them in the
   * message's transaction, before it is parsed.
   */
  rules: readonly Rule[] | ((em: EntityManager) => Promise<readonly Rule[]>);
  subscriptionSlot: number | null;
  correlate: boolean;
  sender: string;
  raw: string;
  receivedAt: Date;
  deviceReceivedAt: Date | null;
  clientMessageId: string | null;
}

/**
 * Steps 1 and 2: the message is stored once per sms_hash, parsed once. A duplicate inserts
 * nothing and returns the stored row (which may still be pending after a crash: the caller
 * finishes it). Messages that will never be correlated are stored finished. One transaction
 * either way, the taught rules' check, when asked for, its first statement: the insert's
 * conflict on (sim_id, sms_hash) is the duplicate check (a concurrent copy waits at the SIM's
 * lock, which the insert takes, for the first to commit, then reads its row).
 */
export async function storeMessage(
  deps: FlowDeps,
  input: StoreInput,
): Promise<{ message: MessageRecord; duplicate: boolean }> {
  const senderKnown = isKnownSender(deps.senders ?? DEFAULT_SENDER_IDS, input.operator, input.sender);
  // A copy from another sender is hashed with its sender: a forged copy sent first must not
  // make the operator's own message a "duplicate" of it.
  const hash = smsHash(input.simId, input.raw, input.clientMessageId, senderKnown ? null : input.sender);
  const stored = await deps.db.tx(async (em) => {
    const rules = typeof input.rules === "function" ? await input.rules(em) : input.rules;
    const parsed = parseMessage(input.operator, input.raw, rules);
    const outcome = initialOutcome(routeOf(parsed.kind, input.correlate, parsed.rule, senderKnown));
    const state = outcome === "pending" ? "pending" : "done";
    const message = {
      id: randomUUID(),
      sim_id: input.simId,
      sms_hash: hash,
      sender: input.sender,
      raw_text: input.raw,
      received_at: input.receivedAt,
      device_received_at: input.deviceReceivedAt,
      client_message_id: input.clientMessageId,
      subscription_slot: input.subscriptionSlot,
      kind: parsed.kind,
      amount: parsed.amount,
      fee: parsed.fee,
      commission: parsed.commission,
      balance_after: parsed.balance_after,
      operator_ref: parsed.operator_ref,
      counterparty_msisdn: parsed.counterparty_msisdn,
      counterparty_name: parsed.counterparty_name,
      direction: parsed.direction,
      language: parsed.language,
      parse_rule: parsed.rule,
      state,
      outcome,
    } as const;
    const inserted = await insertMessage(em, message);
    if (!inserted) return { duplicate: (await findByHash(em, input.simId, hash))! };
    await messageStored(em, inserted);
    if (inserted.outcome === "unknown_sender") await unknownSenderAlert(em, inserted, input.operator);
    if (inserted.parse_rule === UNRECOGNISED_RULE) await checkWording(em, inserted, input.operator);
    await readingPublished(em, inserted);
    return inserted;
  });
  if ("duplicate" in stored) return { message: stored.duplicate, duplicate: true };
  deps.published();
  return { message: stored, duplicate: false };
}

/**
 * What follows a reading a wording rule wrote to a message: its correlation published when
 * final, its place in the SIM's balance chain, and its day's counts and reported balance moved
 * by what changed.
 */
export async function readingRecorded(
  em: EntityManager,
  before: MessageRecord | undefined,
  after: MessageRecord,
): Promise<void> {
  await readingPublished(em, after);
  await addToDay(em, before, after);
}

/** readingRecorded but for the day's counts, which the statement that wrote the reading added (a new message's insert). */
async function readingPublished(em: EntityManager, after: MessageRecord): Promise<void> {
  if (after.state === "done") await messageCorrelated(em, after);
  await checkChain(em, after);
}

/** An unrecognised text: has the share of them on this SIM jumped (a new wording)? */
async function checkWording(em: EntityManager, m: MessageRecord, operator: Operator): Promise<void> {
  const counts = await unrecognisedCounts(em, m.sim_id, new Date(), UNRECOGNISED_RULE);
  const drift = wordingDrift(counts.lastHour, counts.usual);
  if (drift.jump) await wordingChangedAlert(em, m, operator, drift);
}

export async function lookupSim(deps: FlowDeps, simId: string): Promise<SimSummary | undefined> {
  if (!simId) return undefined;
  try {
    return (await deps.fleet.lookupSim({ simId })).sim;
  } catch (err) {
    if (err instanceof ConnectError && (err.code === Code.NotFound || err.code === Code.InvalidArgument))
      return undefined;
    throw err;
  }
}
