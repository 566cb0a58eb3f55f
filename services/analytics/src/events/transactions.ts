import { fromTs, on, Topics } from "@transferops/kit";
import { TransactionChangedSchema } from "@transferops/kit/gen/transferops/intake/v1/events_pb";
import { localFields } from "../domain/local-time.ts";
import { applyTransaction } from "../store/projections.ts";

export const transactionTopics = [Topics.transactions];

/** Intake transactions: money taken in (EUR) and to deliver (XAF). */
export const transactionHandlers = [
  on(TransactionChangedSchema, async (em, e, meta) => {
    const date = fromTs(e.transactionDate) ?? fromTs(e.changedAt) ?? meta.occurredAt;
    await applyTransaction(em, {
      transaction_id: e.transactionId,
      state: e.state,
      received_amount_xaf: e.receivedAmountXaf,
      send_amount_eur: e.sendAmountEur ?? null,
      rate: e.rate ?? null,
      operation_id: e.operationId || null,
      launched_by: e.launchedBy || null,
      transaction_date: date,
      local_day: localFields(date).day,
      changed_at: fromTs(e.changedAt) ?? meta.occurredAt,
    });
  }),
];
