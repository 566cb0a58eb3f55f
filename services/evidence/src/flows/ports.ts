import type { Client } from "@connectrpc/connect";
import type { Database, Logger } from "@transferops/kit";
import type { DispatchService } from "@transferops/kit/gen/transferops/dispatch/v1/dispatch_service_pb";
import type { FleetService } from "@transferops/kit/gen/transferops/fleet/v1/fleet_service_pb";
import type { SenderIds } from "../domain/senders.ts";

/**
 * What evidence asks of dispatch: prove an operation with a message, attach one by hand, the
 * operations of a SIM (those waiting for a proof, for the unknown wordings).
 */
export type DispatchPort = Pick<Client<typeof DispatchService>, "proveOperation" | "attachEvidence" | "getSimActivity">;

/** What evidence asks of fleet: the SIM (operator, handset), an agent's grant, a proven balance. */
export type FleetPort = Pick<Client<typeof FleetService>, "lookupSim" | "getAgentScope" | "recordProvenBalance">;

/**
 * Points where a test stands in for a crash: a hook that throws aborts the step as a
 * process dying there would (the transaction rolls back, nothing after it runs).
 */
export interface FaultHooks {
  /** After dispatch answered a proof request, before evidence recorded the answer. */
  afterProof?: (messageId: string) => void | Promise<void>;
  /** After the link committed, before the proven balance reached fleet. */
  beforeBalance?: (messageId: string) => void | Promise<void>;
  /** After a closed day's SIMs were summed from their messages, before their sums are kept. */
  beforeKeep?: (day: string) => void | Promise<void>;
}

export interface FlowDeps {
  db: Database;
  dispatch: DispatchPort;
  fleet: FleetPort;
  log: Logger;
  /** Called after a commit that wrote to the outbox. */
  published: () => void;
  hooks?: FaultHooks;
  /** Each operator's known sender ids; DEFAULT_SENDER_IDS when absent. */
  senders?: SenderIds;
}
