// What the actors of test/sim share: the gateway client, the history, the agents and the
// handsets as the actors see them. Its own module, below actors.ts, intake.ts and admins.ts, so
// that those import it and not each other (no import circle).
import type { OutgoingSms } from "../simulator/operator-sms.ts";
import type { OperatorName } from "../simulator/operator.ts";
import type { Random } from "./random.ts";

/** The part of a gateway answer the actors read. */
export interface Reply {
  status: number;
  body: any;
}

export type Http = (
  gateway: string,
  method: string,
  path: string,
  auth: { token?: string; apiKey?: boolean },
  body?: unknown,
) => Promise<Reply>;

export interface SimAgent {
  agentId: string;
  token: string;
  login: string;
  active: boolean;
  role: "agent" | "supervisor";
}

/** What the database says of an operation, refreshed continuously (targets are picked from it). */
export interface OperationRow {
  operation_id: string;
  status: string;
  sim_id: string | null;
  montant: number;
  op_type: string;
  /** The owning agent (absent in older snapshots). */
  agent_id?: string;
}

export type Balances = Map<string, { balance: number | null; at: string | null }>;

/** A create accepted by dispatch, as the free-balance invariant needs it. */
export interface CreateRecord {
  operationId: string;
  simId: string | null;
  before: Balances;
  after: Balances;
}

/** An operation known to automation (for replays and retries). */
export interface KnownOperation {
  operationId: string;
  requestId: string;
  body: Record<string, unknown>;
  parent?: string;
}

export interface SimContext {
  random: Random;
  http: Http;
  gatewayUrls: string[];
  adminToken: string;
  /** A second admin (a rule that can confirm is activated by an admin who did not draft it). */
  secondAdminToken: string;
  agents: SimAgent[];
  /** An agent at the board: the owner of most operations most of the time, else another. */
  agentAt: (pick: number) => SimAgent;
  simIds: () => string[];
  rows: () => Map<string, OperationRow>;
  snapshotBalances: () => Promise<Balances>;
  /** A create accepted (a launch's operation included): free balance, replays, retries, lost writes. */
  accepted: (op: KnownOperation, record: CreateRecord) => void;
  /** Forwards a text as handset `handset` would (recorded when acknowledged). */
  forward: (handset: number, sms: OutgoingSms, what: string, about?: string) => Promise<void>;
  handsetCount: number;
  /** The operator of each SIM, in the order of `simIds()`. */
  simOperators: () => OperatorName[];
  /** Where the simulation's webhook receiver listens (none: the webhook actions do nothing). */
  webhookBaseUrl?: string;
  /** One more check of an invariant made from answers (counted in the report). */
  checked: (invariant: number) => void;
  /** An entity's history line; a line starting `VIOLATION-CANDIDATE(i) ` is a violation of invariant i. */
  note: (ids: string[], line: string) => void;
  log: (s: string) => void;
}

export const CUSTOMERS = ["670112233", "677445566", "651234567", "680998877"];
/** Customers of operator_b (its prefixes 69x, 655-659): the operator_b SIM's deposits go to them. */
export const CUSTOMERS_B = ["690112233", "699445566", "656123456"];
export const customersOf = (operator: OperatorName): string[] => (operator === "operator_b" ? CUSTOMERS_B : CUSTOMERS);
/** The sender id of each operator's texts (services/evidence/src/domain/senders.ts). */
export const SENDER_OF: Record<OperatorName, string> = { operator_a: "MobileMoney", operator_b: "OrangeMoney" };
export const FORGER_NUMBERS = ["+237677001122", "699887766", "MobileMoney1", "Mobile Money Info"];
export const ACTIVE = ["queued", "running", "awaiting_evidence"];

/** Rows matching `pred`, sorted by id (a pick is an index into them). */
export function rowsWhere(rows: Map<string, OperationRow>, pred: (r: OperationRow) => boolean): OperationRow[] {
  return [...rows.values()].filter(pred).sort((a, b) => a.operation_id.localeCompare(b.operation_id));
}

/** Why the gateway refused, or the status it answered. */
export const outcomeOf = (a: Reply): string =>
  String(a.body?.state ?? a.body?.status ?? a.body?.context?.reason ?? a.body?.code ?? "");

/** 2xx: the gateway acknowledged the write. */
export const acknowledged = (a: Reply): boolean => a.status >= 200 && a.status < 300;
