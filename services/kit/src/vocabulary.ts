// The closed vocabularies of the contract that more than one service (and the gateway's
// schemas and the board) check, defined once, as const tuples: checked at run time, narrowed at compile
// time. A vocabulary only one service uses stays in that service's domain/. Browser-safe:
// the board imports this file (and msisdn.ts) as it is.

export const OPERATORS = ["operator_a", "operator_b"] as const;
export type Operator = (typeof OPERATORS)[number];

export const OP_TYPES = ["deposit", "withdrawal", "balance", "float_deposit", "mini_statement"] as const;
export type OpType = (typeof OP_TYPES)[number];

export const ROLES = ["agent", "supervisor", "admin"] as const;
export type Role = (typeof ROLES)[number];

/** A SIM's status in fleet, as dispatch reads it too. */
export const SIM_STATUSES = ["active", "frozen", "retired"] as const;
export type SimStatus = (typeof SIM_STATUSES)[number];

export function isOperator(value: string): value is Operator {
  return (OPERATORS as readonly string[]).includes(value);
}
