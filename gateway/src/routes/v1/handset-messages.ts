import { z } from "zod";
import { create } from "@bufbuild/protobuf";
import { ts } from "@transferops/kit";
import {
  MessageResultSchema,
  type MessageResult,
} from "@transferops/kit/gen/transferops/evidence/v1/evidence_service_pb";
import { toContractJson } from "../../http/json.ts";
import { instant, ok, route, text, type Route } from "../../http/route.ts";
import { withReasons } from "../../http/reasons.ts";
import { EVIDENCE } from "../../http/service-reasons.ts";
import { contractSchema } from "../../http/contract-schema.ts";

const message = z.object({
  sender: text(100),
  raw: z.string().min(1).max(4000),
  received_at: instant(),
  device_received_at: instant().nullable().optional(),
  client_message_id: z.string().min(1).max(64).nullable().optional(),
});

const body = z.object({
  sim_id: text(100),
  // An integer per the contract; "0"/"1" (how the register body types the slot) is accepted too.
  // Recorded, never enforced: any other value is recorded as unknown (null) rather than
  // refusing the batch, which the handset would resend unchanged forever.
  subscription_slot: z
    .union([z.literal(0), z.literal(1), z.literal("0"), z.literal("1"), z.unknown()])
    .transform((v) => (v === 0 || v === 1 || v === "0" || v === "1" ? Number(v) : null))
    .optional(),
  correlate: z.boolean().optional(),
  // Each entry is checked on its own (see `split`): one bad message, or one too many, is
  // refused alone and never blocks the others (docs/decisions/evidence.md, Submission).
  messages: z.array(z.union([message, z.unknown()])),
});

type Message = z.infer<typeof message>;

/** The refusal of one message the gateway could not read, shaped as evidence shapes its own. */
function refusedResult(detail: string, clientMessageId: unknown): MessageResult {
  return create(MessageResultSchema, {
    clientMessageId: typeof clientMessageId === "string" ? clientMessageId : undefined,
    outcome: "refused",
    refusedReason: "invalid_message",
    refusedDetail: detail,
  });
}

/** The messages evidence is sent (with their places in the request) and those refused here. */
function split(entries: unknown[]): { valid: { at: number; m: Message }[]; refused: Map<number, MessageResult> } {
  const valid: { at: number; m: Message }[] = [];
  const refused = new Map<number, MessageResult>();
  entries.forEach((entry, at) => {
    const parsed = message.safeParse(entry);
    if (parsed.success) valid.push({ at, m: parsed.data });
    else {
      const detail = parsed.error.issues.map((i) => `${i.path.join(".") || "message"}: ${i.message}`).join("; ");
      refused.set(at, refusedResult(detail, (entry as { client_message_id?: unknown } | null)?.client_message_id));
    }
  });
  return { valid, refused };
}

/**
 * The response: one entry of `results` per message, in request order, plus the contract's
 * top-level `matched` and `restated` (true when any message matched or restated) and the
 * richer form (`kind`, `outcome`, `operation`, `balance`, `previous_balance`) of the
 * decisive message: the first that matched, else the first. For a single message the top
 * level is exactly its result.
 */
function submissionJson(results: MessageResult[]) {
  const decisive = results.find((r) => r.matched) ?? results[0];
  const json = results.map((r) => toContractJson(MessageResultSchema, r));
  const top = decisive ? json[results.indexOf(decisive)] : undefined;
  return {
    matched: results.some((r) => r.matched),
    restated: results.some((r) => r.restated),
    kind: top?.kind ?? null,
    outcome: top?.outcome ?? null,
    operation: top?.operation ?? null,
    balance: top?.balance ?? null,
    previous_balance: top?.previous_balance ?? null,
    results: json,
  };
}

const resultSchema = contractSchema(MessageResultSchema);
// The top level is the decisive message's; null throughout for a submission with no message.
const submissionSchema = z.object({
  matched: z.boolean(),
  restated: z.boolean(),
  kind: resultSchema.shape.kind.nullable(),
  outcome: resultSchema.shape.outcome.nullable(),
  operation: resultSchema.shape.operation.nullable(),
  balance: resultSchema.shape.balance.nullable(),
  previous_balance: resultSchema.shape.previous_balance.nullable(),
  results: z.array(resultSchema),
});

export const handsetMessageRoutes: Route[] = [
  route({
    operationId: "submitMessages",
    method: "post",
    path: "/v1/device/messages",
    tag: "Handset",
    summary: "Forward operator SMS: deduplicated, parsed, stored, correlated to an operation of the same SIM",
    description:
      "Each message is deduplicated (sms_hash), parsed with the SIM's operator's parser and stored. Only a message " +
      "whose `sender` is one of the operator's sender ids (OPERATOR_A_SENDERS / OPERATOR_B_SENDERS; case, spaces and " +
      "punctuation ignored) is correlated: any other sender gives the outcome `unknown_sender` (stored, in the " +
      "unmatched queue, alert `evidence_unknown_sender`, never confirms). Only a DEP can confirm a transfer and only " +
      "a BAL a balance check; a text no rule recognises (kind null) is an `orphan` with the values it labels. " +
      "Outcomes: confirmed, restated, attached, ambiguous, divergent (MSISDN or amount), orphan, movement, stored, " +
      "not_correlated, unknown_sender, pending (docs/decisions/evidence.md). " +
      "Every valid message is stored: a message that breaks a rule (sender, raw over 4,000 characters, " +
      "received_at without offset, client_message_id over 64) gets outcome `refused` with refused_reason " +
      "`invalid_message` and refused_detail (drop it: it will never be accepted), and messages past the first 100 " +
      "get refused_reason `over_batch_limit` (send them again); the others are answered as usual. The route's " +
      "codes are 200, 401, 403 and 429; 422 only for a body with no sim_id or no messages array.",
    auth: ["device"],
    body,
    responses: withReasons(
      {
        200: {
          description:
            "matched, restated, kind, outcome, operation, balance, previous_balance, and `results` (one per message)",
          schema: submissionSchema,
        },
        401: "Bad credentials",
        403: "SIM not assigned to this device",
        422: "No sim_id, or messages not an array: nothing can be filed (a message's own faults are refused in its result, with 200)",
      },
      EVIDENCE,
      ["device_required", "sim_not_assigned_to_device", "invalid_request"],
    ),
    async handle({ caller, body, services }) {
      const { valid, refused } = split(body.messages);
      // Sent even with no valid message: the SIM's scope (403) is evidence's to check.
      const res = await services.evidence.submitMessages({
        caller,
        simId: body.sim_id,
        subscriptionSlot: body.subscription_slot ?? undefined,
        correlate: body.correlate ?? true,
        messages: valid.map(({ m }) => ({
          sender: m.sender,
          raw: m.raw,
          receivedAt: ts(m.received_at),
          deviceReceivedAt: ts(m.device_received_at ?? undefined),
          clientMessageId: m.client_message_id ?? undefined,
        })),
      });
      const results: MessageResult[] = body.messages.map((_, at) => refused.get(at)!);
      valid.forEach(({ at }, i) => (results[at] = res.results[i]!));
      return ok(submissionJson(results));
    },
  }),
];
