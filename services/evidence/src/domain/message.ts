// A stored message as the rules see it (see message-state.md).

import type { Outcome } from "./outcomes.ts";
import type { MessageKind } from "./parsers/types.ts";

export type CorrelationState = "pending" | "done";
/** `contradiction`: the message proves an operation dispatch had failed or rejected (outcome `divergent`). */
export type Link = "proof" | "restatement" | "contradiction";
/** Whether the proven balance still has to reach fleet. */
export type BalanceState = "none" | "pending" | "done";

export interface MessageRecord {
  id: string;
  sim_id: string;
  sms_hash: string;
  source: string;
  sender: string;
  raw_text: string;
  received_at: Date;
  device_received_at: Date | null;
  client_message_id: string | null;
  subscription_slot: number | null;
  kind: MessageKind | null;
  amount: number | null;
  fee: number | null;
  /** Commission credited to the wallet inside this receipt (see ParsedMessage). */
  commission: number | null;
  balance_after: number | null;
  operator_ref: string | null;
  counterparty_msisdn: string | null;
  counterparty_name: string | null;
  direction: "in" | "out" | null;
  language: string | null;
  parse_rule: string | null;
  state: CorrelationState;
  outcome: Outcome;
  is_ambiguous: boolean;
  operation_id: string | null;
  link: Link | null;
  linked_at: Date | null;
  linked_by: string | null;
  /** Binary dispatch.v1.Operation as returned when the message confirmed or restated it. */
  operation_snapshot: Uint8Array | null;
  balance_state: BalanceState;
  balance: number | null;
  previous_balance: number | null;
  dismissed_at: Date | null;
  dismiss_reason: string | null;
  dismissed_by: string | null;
  stored_at: Date;
  correlated_at: Date | null;
  attempts: number;
}
