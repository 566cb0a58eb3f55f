/** What a message says, as the operation's evidence columns keep it. */
export interface EvidenceFacts {
  message_id: string;
  operator_ref: string | null;
  amount: number;
  fee: number | null;
  balance_after: number | null;
  raw_text: string;
  received_at: Date | null;
  kind: string | null;
  is_ambiguous: boolean;
}
