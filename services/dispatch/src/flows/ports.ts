import type { Client } from "@connectrpc/connect";
import { Code, ConnectError } from "@connectrpc/connect";
import { fromTs, type Caller, type Database, type Logger } from "@transferops/kit";
import type { FleetService } from "@transferops/kit/gen/transferops/fleet/v1/fleet_service_pb";
import type { DispatchConfig } from "../config.ts";
import type { AccessGrant, SimStatus, Operator, UssdMenus } from "../domain/index.ts";
import type { IdleDevices } from "../store/idle-devices.ts";

/** What every dispatch handler and flow may use. */
export interface DispatchDeps {
  db: Database;
  config: DispatchConfig;
  fleet: FleetPort;
  /** Called after a commit that wrote to the outbox (kicks the relay). */
  published: () => void;
  log: Logger;
  /** The clock; tests may pin it. */
  now: () => Date;
  menus?: UssdMenus;
  /** Handsets known to have nothing to do: their polls touch no database. */
  idle: IdleDevices;
}

/** A SIM as dispatch needs it to select one and to address its handset. */
export interface FleetSim {
  sim_id: string;
  operator: Operator;
  msisdn: string;
  status: SimStatus;
  device_id: string | null;
  device_status: string | null;
  device_label: string | null;
  subscription_slot: number | null;
  balance_mirror: number | null;
  balance_updated_at: Date | null;
}

export interface FleetAgent {
  exists: boolean;
  is_active: boolean;
  role: string;
  full_name: string;
}

export interface DispatchContext {
  breaker_active: boolean;
  agent: FleetAgent;
  grant: AccessGrant | null;
  sims: FleetSim[];
}

export interface AgentScope extends FleetAgent {
  allowed_sim_ids: string[];
}

/**
 * What dispatch asks fleet (which owns agents, grants, SIMs, PINs and the breaker).
 * An interface so tests can stand a fake in for fleet.
 */
export type RevealedPin = { pin: string } | { moved: { device_id: string | null; slot: number | null } };

export interface FleetPort {
  dispatchContext(q: {
    caller: Caller | undefined;
    agentId: string;
    operator: string;
    opType: string;
    simId: string | null;
  }): Promise<DispatchContext>;
  /**
   * The decrypted PIN, for the dispatch response only: never logged, stored, or put in an event
   * or error. Revealed only while the SIM is in the device; else where the SIM is now. Only
   * while the device's token of `tokenVersion` stands: else Unauthenticated, nothing revealed.
   */
  revealPin(simId: string, operationId: string, device: { id: string; tokenVersion: string }): Promise<RevealedPin>;
  lookupSim(simId: string): Promise<FleetSim | undefined>;
  agentScope(agentId: string): Promise<AgentScope>;
}

const num = (v: bigint | undefined): number | null => (v === undefined ? null : Number(v));

export function fleetPort(client: Client<typeof FleetService>): FleetPort {
  return {
    async dispatchContext(q) {
      const res = await client.getDispatchContext({
        caller: q.caller,
        agentId: q.agentId,
        operator: q.operator,
        opType: q.opType,
        simId: q.simId ?? undefined,
      });
      return toDispatchContext(res);
    },
    async revealPin(simId, operationId, device) {
      const r = await client.revealPin({
        simId,
        operationId,
        deviceId: device.id,
        deviceTokenVersion: device.tokenVersion,
      });
      if (r.moved) return { moved: { device_id: r.moved.deviceId ?? null, slot: r.moved.subscriptionSlot ?? null } };
      return { pin: r.pin };
    },
    async lookupSim(simId) {
      try {
        const { sim } = await client.lookupSim({ simId });
        if (!sim) return undefined;
        return {
          sim_id: sim.simId,
          operator: sim.operator as Operator,
          msisdn: sim.msisdn,
          status: sim.status as SimStatus,
          device_id: sim.deviceId ?? null,
          device_status: null,
          device_label: null,
          subscription_slot: sim.subscriptionSlot ?? null,
          balance_mirror: num(sim.balanceMirror),
          balance_updated_at: fromTs(sim.balanceUpdatedAt) ?? null,
        };
      } catch (err) {
        if (err instanceof ConnectError && err.code === Code.NotFound) return undefined;
        throw err;
      }
    },
    async agentScope(agentId) {
      const res = await client.getAgentScope({ agentId });
      return {
        exists: res.exists,
        is_active: res.isActive,
        role: res.role,
        full_name: res.fullName,
        allowed_sim_ids: [...res.allowedSimIds],
      };
    },
  };
}

type DispatchContextResponse = Awaited<ReturnType<Client<typeof FleetService>["getDispatchContext"]>>;

/** Fleet's answer in dispatch's words: the breaker, the agent, the grant and the SIMs. */
function toDispatchContext(res: DispatchContextResponse): DispatchContext {
  return {
    breaker_active: res.breakerActive,
    agent: {
      exists: res.agent?.exists ?? false,
      is_active: res.agent?.isActive ?? false,
      role: res.agent?.role ?? "",
      full_name: res.agent?.fullName ?? "",
    },
    grant: res.grant
      ? {
          allowed_sim_ids: [...res.grant.allowedSimIds],
          allowed_op_types: [...res.grant.allowedOpTypes],
          max_amount: num(res.grant.maxAmount),
        }
      : null,
    sims: res.sims.map((s) => ({
      sim_id: s.simId,
      operator: s.operator as Operator,
      msisdn: s.msisdn,
      status: s.status as SimStatus,
      device_id: s.deviceId ?? null,
      device_status: s.deviceStatus ?? null,
      device_label: s.deviceLabel ?? null,
      subscription_slot: s.subscriptionSlot ?? null,
      balance_mirror: num(s.balanceMirror),
      balance_updated_at: fromTs(s.balanceUpdatedAt) ?? null,
    })),
  };
}
