// The closed vocabularies fleet checks, as const tuples: checked at run time, narrowed at
// compile time.

// Operators, operation types and SIM statuses are the platform's (the kit's); fleet's own follow.
import {
  isOperator,
  OPERATORS,
  OP_TYPES,
  SIM_STATUSES,
  TRANSFER_OP_TYPES,
  type Operator,
  type OpType,
  type SimStatus,
  type TransferOpType,
} from "@transferops/kit/pure";
import { WEBHOOK_EVENTS } from "./webhook-events.ts";

export { isOperator, OPERATORS, OP_TYPES, SIM_STATUSES, type Operator, type OpType, type SimStatus };
export { WEBHOOK_EVENTS, type WebhookEvent } from "./webhook-events.ts";

/** Operation types a fleet limit can be recorded for: the money-moving ones (the kit's transfer types). */
export const LIMIT_OP_TYPES = TRANSFER_OP_TYPES;
export type LimitOpType = TransferOpType;

export const DEVICE_STATUSES = ["active", "frozen"] as const;
export type DeviceStatus = (typeof DEVICE_STATUSES)[number];

/** Where a balance reading came from; `n8n` is accepted beside the contract's three. */
export const BALANCE_SOURCES = ["sms", "balance_check", "api", "n8n"] as const;
export type BalanceSource = (typeof BALANCE_SOURCES)[number];

export const SEVERITIES = ["info", "warning", "critical"] as const;
export type Severity = (typeof SEVERITIES)[number];

const member =
  <T extends string>(values: readonly T[]) =>
  (v: string): v is T =>
    (values as readonly string[]).includes(v);

export const isOpType = member(OP_TYPES);
export const isLimitOpType = member(LIMIT_OP_TYPES);
export const isSimStatus = member(SIM_STATUSES);
export const isBalanceSource = member(BALANCE_SOURCES);
export const isWebhookEvent = member(WEBHOOK_EVENTS);

/** A SIM number in local format: 9 digits. */
export const MSISDN_PATTERN = /^\d{9}$/;

/** Hex device ids: 32 lowercase hex characters (16 random bytes). */
export const DEVICE_ID_PATTERN = /^[0-9a-f]{32}$/;

/** The contract's staleness window: a reading older than this is stale. */
export const BALANCE_STALE_AFTER_MS = 24 * 3600_000;
