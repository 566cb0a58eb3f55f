import { z } from "zod";
import { ts } from "@transferops/kit";
import {
  MessageResultSchema,
  type MessageResult,
} from "@transferops/kit/gen/transferops/evidence/v1/evidence_service_pb";
import { toContractJson } from "../../http/json.ts";
import { ok, route, text, type Route } from "../../http/route.ts";
import { withReasons } from "../../http/reasons.ts";
import { EVIDENCE } from "../../http/service-reasons.ts";
import { contractSchema } from "../../http/contract-schema.ts";

const timestamp = () => z.iso.datetime({ offset: true });

const message = z.object({
  sender: text(100),
  raw: z.string().min(1).max(4000),
  received_at: timestamp(),
  device_received_at: timestamp().nullable().optional(),
  client_message_id: z.string().min(1).max(64).nullable().optional(),
});

const body = z.object({
  sim_id: text(100),
  // An integer per the contract; "0"/"1" (how the register body types the slot) is accepted too.
  subscription_slot: z
    .union([z.literal(0), z.literal(1), z.literal("0"), z.literal("1")])
    .transform((v) => Number(v))
    .nullable()
    .optional(),
  correlate: z.boolean().optional(),
  messages: z.array(message).min(1).max(100),
});

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
  const top = json[results.indexOf(decisive)];
  return {
    matched: results.some((r) => r.matched),
    restated: results.some((r) => r.restated),
    kind: top.kind,
    outcome: top.outcome,
    operation: top.operation,
    balance: top.balance,
    previous_balance: top.previous_balance,
    results: json,
  };
}

const resultSchema = contractSchema(MessageResultSchema);
const submissionSchema = z.object({
  matched: z.boolean(),
  restated: z.boolean(),
  kind: resultSchema.shape.kind,
  outcome: resultSchema.shape.outcome,
  operation: resultSchema.shape.operation,
  balance: resultSchema.shape.balance,
  previous_balance: resultSchema.shape.previous_balance,
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
      "not_correlated, unknown_sender, pending (docs/decisions/evidence.md).",
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
        422: "Invalid body",
      },
      EVIDENCE,
      ["device_required", "sim_not_assigned_to_device", "invalid_request"],
    ),
    async handle({ caller, body, services }) {
      const res = await services.evidence.submitMessages({
        caller,
        simId: body.sim_id,
        subscriptionSlot: body.subscription_slot ?? undefined,
        correlate: body.correlate ?? true,
        messages: body.messages.map((m) => ({
          sender: m.sender,
          raw: m.raw,
          receivedAt: ts(m.received_at),
          deviceReceivedAt: ts(m.device_received_at ?? undefined),
          clientMessageId: m.client_message_id ?? undefined,
        })),
      });
      return ok(submissionJson(res.results));
    },
  }),
];
