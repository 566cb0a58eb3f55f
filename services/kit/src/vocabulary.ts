// The closed vocabularies of the contract that more than one service (and the gateway's
// schemas) check, defined once, as const tuples: checked at run time, narrowed at compile
// time. A vocabulary only one service uses stays in that service's domain/.

export const OPERATORS = ["operator_a", "operator_b"] as const;
export type Operator = (typeof OPERATORS)[number];

export const OP_TYPES = ["deposit", "withdrawal", "balance", "float_deposit", "mini_statement"] as const;
export type OpType = (typeof OP_TYPES)[number];

export const ROLES = ["agent", "supervisor", "admin"] as const;
export type Role = (typeof ROLES)[number];
