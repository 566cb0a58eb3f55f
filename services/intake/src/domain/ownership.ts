// Ownership of the transaction's columns, enforced where rows are written: the store
// builds every insert and update through `checkWrite`, so a write naming a column its
// writer does not own fails before any SQL runs.
//
// Intake (the automation caller) owns the transfer details and writes them once, at
// creation; it never writes the state, the launch, the operation or the cancellation.
// The board owns those and rewrites only the receiver fields of the transfer details.

export const INTAKE_COLUMNS = [
  "id",
  "request_id",
  "parent_request_id",
  "master_transaction_id",
  "contact_id",
  "customer_name",
  "customer_phone",
  "receiver_name",
  "receiver_phone",
  "operator",
  "received_amount_xaf",
  "rate",
  "send_amount_eur",
  "partner_verify",
  "transaction_date",
] as const;

export const BOARD_COLUMNS = [
  "state",
  "launched_by",
  "launched_by_name",
  "launched_at",
  "operation_id",
  "outcome",
  "settled_at",
  "settled_by",
  "settled_by_name",
  "payment_confirmed_at",
  "payment_confirmed_by",
  "cancelled_reason",
  "receiver_name",
  "receiver_phone",
  "contact_id",
  // Whether the receiver is still the one the partner verified (domain/receiver.ts).
  "receiver_verified",
] as const;

export type Writer = "intake" | "board";

const OWNED: Record<Writer, readonly string[]> = { intake: INTAKE_COLUMNS, board: BOARD_COLUMNS };

/** Columns named by `columns` that `writer` does not own; empty when the write is allowed. */
export function foreignColumns(writer: Writer, columns: readonly string[]): string[] {
  return columns.filter((c) => !OWNED[writer].includes(c));
}

export function checkWrite(writer: Writer, columns: readonly string[]): void {
  const foreign = foreignColumns(writer, columns);
  if (foreign.length) throw new Error(`${writer} may not write ${foreign.join(", ")}`);
}
