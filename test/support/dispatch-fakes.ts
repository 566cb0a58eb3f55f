import { Code, ConnectError } from "@connectrpc/connect";
import type { AccessGrant, Operator } from "../../services/dispatch/src/domain/index.ts";
import type {
  AgentScope,
  DispatchContext,
  FleetPort,
  FleetSim,
  RevealedPin,
} from "../../services/dispatch/src/flows/ports.ts";

export interface FakeAgent {
  role: "agent" | "supervisor" | "admin";
  full_name: string;
  is_active: boolean;
}

/**
 * Fleet as dispatch sees it, in memory: agents, grants, SIMs (with PINs and balances),
 * the breaker. For service tests that exercise dispatch alone through a real gRPC server.
 */
export class FakeFleet implements FleetPort {
  breaker = false;
  agents = new Map<string, FakeAgent>();
  grants = new Map<string, AccessGrant>();
  sims = new Map<string, FleetSim & { pin: string }>();
  /** SIM ids whose PIN was revealed, in order (never the PIN itself). */
  revealed: string[] = [];

  addAgent(id: string, a: Partial<FakeAgent> = {}): string {
    this.agents.set(id, { role: "agent", full_name: `Agent ${id.slice(0, 4)}`, is_active: true, ...a });
    return id;
  }

  grant(agentId: string, grant: Partial<AccessGrant> & { allowed_sim_ids: string[] }): void {
    this.grants.set(agentId, { allowed_op_types: ["deposit", "balance"], max_amount: 500_000, ...grant });
  }

  addSim(
    sim: Partial<FleetSim> & { sim_id: string; operator: Operator; device_id: string | null },
    pin = "1234",
  ): FleetSim {
    const full: FleetSim & { pin: string } = {
      msisdn: sim.operator === "operator_a" ? "670000000" : "690000000",
      status: "active",
      device_status: sim.device_id ? "active" : null,
      device_label: sim.device_id ? `Handset ${sim.device_id}` : null,
      subscription_slot: sim.device_id ? 0 : null,
      balance_mirror: 1_000_000,
      balance_updated_at: new Date(),
      ...sim,
      pin,
    };
    this.sims.set(sim.sim_id, full);
    return full;
  }

  async dispatchContext(q: { agentId: string; operator: string; simId: string | null }): Promise<DispatchContext> {
    const agent = this.agents.get(q.agentId);
    const sims = [...this.sims.values()]
      .filter((s) => (q.simId ? s.sim_id === q.simId : !q.operator || s.operator === q.operator))
      .map(({ pin: _pin, ...s }) => ({ ...s }));
    return {
      breaker_active: this.breaker,
      agent: agent
        ? { exists: true, is_active: agent.is_active, role: agent.role, full_name: agent.full_name }
        : { exists: false, is_active: false, role: "", full_name: "" },
      grant: this.grants.get(q.agentId) ?? null,
      sims,
    };
  }

  async revealPin(simId: string, _operationId: string, device: { id: string }): Promise<RevealedPin> {
    const sim = this.sims.get(simId);
    if (!sim) throw new ConnectError(`SIM ${simId} not found`, Code.NotFound);
    if (sim.device_id !== device.id) return { moved: { device_id: sim.device_id, slot: sim.subscription_slot } };
    this.revealed.push(simId);
    return { pin: sim.pin };
  }

  async lookupSim(simId: string): Promise<FleetSim | undefined> {
    const sim = this.sims.get(simId);
    if (!sim) return undefined;
    const { pin: _pin, ...rest } = sim;
    return rest;
  }

  async agentScope(agentId: string): Promise<AgentScope> {
    const agent = this.agents.get(agentId);
    return {
      exists: agent !== undefined,
      is_active: agent?.is_active ?? false,
      role: agent?.role ?? "",
      full_name: agent?.full_name ?? "",
      allowed_sim_ids: [...(this.grants.get(agentId)?.allowed_sim_ids ?? [])],
    };
  }
}
