import { fromTs, on, Topics } from "@transferops/kit";
import { TransactionChangedSchema } from "@transferops/kit/gen/transferops/intake/v1/events_pb";
import type { Receiver } from "@transferops/kit/gen/transferops/intake/v1/intake_pb";
import { audit } from "../store/agents.ts";

// Fleet owns the audit log. An agent's rewrite of a transaction's receiver happens in intake,
// which publishes `TransactionChanged` (trigger `correct_receiver`, with the change) in the
// same transaction (outbox, `transactions` topic): one audit row `transaction.receiver_corrected`
// per rewrite (who, before, after, and whether the partner's name check still holds),
// written once per event (inbox). Every other change of the topic is skipped.

export const transactionTopics = [Topics.transactions];

const receiver = (r: Receiver | undefined) => ({
  receiver_name: r?.receiverName ?? "",
  receiver_phone: r?.receiverPhone ?? "",
  contact_id: r?.contactId ?? "",
});

export const transactionHandlers = [
  on(TransactionChangedSchema, async (em, event, meta) => {
    const change = event.receiverChange;
    if (event.trigger !== "correct_receiver" || !change) return;
    await audit(em, {
      actor: change.agentId || event.actorAgentId || undefined,
      action: "transaction.receiver_corrected",
      target: event.transactionId,
      details: {
        changed_at: (fromTs(change.changedAt) ?? meta.occurredAt).toISOString(),
        agent_name: change.agentName,
        before: receiver(change.before),
        after: receiver(change.after),
        receiver_verified: change.receiverVerified,
      },
    });
  }),
];
