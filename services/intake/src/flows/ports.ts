import type { Client } from "@connectrpc/connect";
import type { DispatchService } from "@transferops/kit/gen/transferops/dispatch/v1/dispatch_service_pb";
import type { FleetService } from "@transferops/kit/gen/transferops/fleet/v1/fleet_service_pb";
import type { Database, Logger } from "@transferops/kit";
import type { IntakeConfig } from "../config.ts";

/** What every intake handler and flow may use. */
export interface IntakeDeps {
  db: Database;
  config: IntakeConfig;
  ports: Ports;
  log: Logger;
  /** Asks the outbox relay for a pass after a commit. */
  published(): void;
}

/** The operation a launch asks dispatch for, as the contract maps the transaction onto it. */
export interface LaunchOrder {
  requestId: string;
  agentId: string;
  operator: string;
  clientMsisdn: string;
  clientNom: string;
  montant: bigint;
  contactId: string;
  partnerVerified: boolean;
}

/** What intake asks the other services; an interface so a test can see the calls. */
export interface Ports {
  /** Creates (or, for a known request_id, returns) the operation; dispatch refusals are thrown as ConnectErrors. */
  createOperation(order: LaunchOrder): Promise<{ operationId: string; created: boolean }>;
  /** An agent's full name; null when fleet knows no such agent. */
  agentName(agentId: string): Promise<string | null>;
}

export function grpcPorts(dispatch: Client<typeof DispatchService>, fleet: Client<typeof FleetService>): Ports {
  return {
    async createOperation(o) {
      // Intake calls as itself, with the API key's semantics: it names the owning agent
      // (the one who launched) and the origin; dispatch selects the SIM within that
      // agent's grant and runs every create gate. Only this caller may create the
      // launches' `tx-` request_ids.
      const res = await dispatch.createOperation({
        caller: { kind: "intake" },
        requestId: o.requestId,
        agentId: o.agentId,
        operator: o.operator,
        clientMsisdn: o.clientMsisdn,
        clientNom: o.clientNom,
        typeOp: "deposit",
        montant: o.montant,
        contactId: o.contactId,
        partnerVerified: o.partnerVerified,
        // The contract's `aggregated`: work that came from intake through the automation caller.
        origin: "aggregated",
      });
      return { operationId: res.operation!.operationId, created: res.created };
    },
    async agentName(agentId) {
      const res = await fleet.getAgentScope({ agentId });
      return res.exists ? res.fullName : null;
    },
  };
}
