import { fromTs, on, Topics, type EntityManager } from "@transferops/kit";
import {
  MessageCorrelatedSchema,
  MessageDismissedSchema,
  MessageLinkedSchema,
  MessagesPurgedSchema,
  MessageStoredSchema,
} from "@transferops/kit/gen/transferops/evidence/v1/events_pb";
import { localFields } from "../domain/local-time.ts";
import {
  applyMessage,
  beforeLastReset,
  dismissMessage,
  purgeMessages,
  type MessageFacts,
} from "../store/projections.ts";

export const messageTopics = [Topics.messages];

const LINK_OUTCOME: Record<string, string> = {
  proof: "confirmed",
  restatement: "restated",
  attached: "attached",
  contradiction: "divergent",
};

async function project(em: EntityManager, occurredAt: Date, m: Omit<MessageFacts, "local_day">) {
  if (await beforeLastReset(em, occurredAt)) return;
  await applyMessage(em, { ...m, local_day: localFields(m.received_at).day });
}

/** Operator messages: arrival, correlation (ambiguity), links, dismissals, purges. */
export const messageHandlers = [
  on(MessageStoredSchema, async (em, { evidence: e }, meta) => {
    const receivedAt = fromTs(e?.receivedAt);
    if (!e || !receivedAt) return;
    await project(em, meta.occurredAt, {
      message_id: e.id,
      sim_id: e.simId || null,
      received_at: receivedAt,
      kind: e.kind ?? null,
      outcome: e.outcome || "pending",
      is_ambiguous: e.isAmbiguous,
      operation_id: e.operationId || null,
    });
  }),
  on(MessageCorrelatedSchema, async (em, e, meta) => {
    const receivedAt = fromTs(e.receivedAt);
    if (!receivedAt) return;
    await project(em, meta.occurredAt, {
      message_id: e.messageId,
      sim_id: e.simId || null,
      received_at: receivedAt,
      kind: e.kind ?? null,
      outcome: e.outcome,
      is_ambiguous: e.isAmbiguous,
      operation_id: e.operationId || null,
    });
  }),
  on(MessageLinkedSchema, async (em, e, meta) => {
    const receivedAt = fromTs(e.receivedAt);
    if (!receivedAt) return;
    await project(em, meta.occurredAt, {
      message_id: e.messageId,
      sim_id: e.simId || null,
      received_at: receivedAt,
      kind: e.kind ?? null,
      outcome: LINK_OUTCOME[e.link] ?? "confirmed",
      is_ambiguous: false,
      operation_id: e.operationId || null,
    });
  }),
  on(MessageDismissedSchema, async (em, e, meta) => {
    await dismissMessage(em, e.messageId, fromTs(e.dismissedAt) ?? meta.occurredAt);
  }),
  on(MessagesPurgedSchema, async (em, e) => {
    await purgeMessages(em, e.simId || null);
  }),
];
