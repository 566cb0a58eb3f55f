import { fromTs, on, Topics } from "@transferops/kit";
import {
  AgentChangedSchema,
  DeviceChangedSchema,
  DeviceDeletedSchema,
  ProductionDataResetSchema,
  SimChangedSchema,
  SimDeletedSchema,
} from "@transferops/kit/gen/transferops/fleet/v1/events_pb";
import { upsertAgent } from "../store/agents.ts";
import { applyDevice, applyReset, applySim, beforeLastReset, deleteDevice, deleteSim } from "../store/projections.ts";

export const fleetTopics = [Topics.fleet];

/** Agents (names for `by_agent`), SIMs (the load block), devices (handset labels), resets. */
export const fleetHandlers = [
  on(AgentChangedSchema, async (em, event, meta) => {
    const a = event.agent;
    if (!a) return;
    await upsertAgent(
      em,
      { agent_id: a.agentId, full_name: a.fullName, role: a.role, is_active: a.isActive },
      meta.occurredAt,
    );
  }),
  on(SimChangedSchema, async (em, { sim }, meta) => {
    if (!sim || (await beforeLastReset(em, meta.occurredAt))) return;
    await applySim(em, {
      sim_id: sim.simId,
      status: sim.status,
      device_id: sim.deviceId ?? null,
      balance_mirror: sim.balanceMirror ?? null,
      balance_updated_at: fromTs(sim.balanceUpdatedAt) ?? null,
    });
  }),
  on(SimDeletedSchema, async (em, e) => deleteSim(em, e.simId)),
  on(DeviceChangedSchema, async (em, e, meta) => {
    if (!(await beforeLastReset(em, meta.occurredAt))) await applyDevice(em, e.deviceId, e.label);
  }),
  on(DeviceDeletedSchema, async (em, e) => deleteDevice(em, e.deviceId)),
  on(ProductionDataResetSchema, async (em, e, meta) =>
    applyReset(em, fromTs(e.resetAt) ?? meta.occurredAt, e.deletedAgentIds),
  ),
];
