import { create } from "@bufbuild/protobuf";
import { enqueueEvent, Topics, ts, type EntityManager } from "@transferops/kit";
import {
  DeviceChangedSchema,
  DeviceDeletedSchema,
  ProductionDataResetSchema,
  SimChangedSchema,
  SimDeletedSchema,
} from "@transferops/kit/gen/transferops/fleet/v1/events_pb";
import type { SimRecord } from "../store/sims.ts";
import { toSim } from "../flows/mappers.ts";

// What fleet publishes on the `fleet` topic about devices and SIMs, keyed by their id so
// one device's (or SIM's) events keep their order. Written in the caller's transaction.

export type DeviceChange = "created" | "updated" | "frozen" | "restored";
export type SimChange = "created" | "updated" | "frozen" | "unfrozen" | "assigned" | "unassigned" | "balance";

export async function deviceChanged(
  em: EntityManager,
  d: { id: string; label: string; status: string },
  change: DeviceChange,
): Promise<void> {
  await enqueueEvent(em, "fleet", {
    topic: Topics.fleet,
    key: d.id,
    schema: DeviceChangedSchema,
    message: create(DeviceChangedSchema, { deviceId: d.id, label: d.label, status: d.status, change }),
  });
}

/** Dispatch nulls `device_id` on its operations when it reads this. */
export async function deviceDeleted(em: EntityManager, deviceId: string, unassignedSimIds: string[]): Promise<void> {
  await enqueueEvent(em, "fleet", {
    topic: Topics.fleet,
    key: deviceId,
    schema: DeviceDeletedSchema,
    message: create(DeviceDeletedSchema, { deviceId, unassignedSimIds }),
  });
}

export async function simChanged(em: EntityManager, sim: SimRecord, change: SimChange): Promise<void> {
  await enqueueEvent(em, "fleet", {
    topic: Topics.fleet,
    key: sim.id,
    schema: SimChangedSchema,
    message: create(SimChangedSchema, { sim: toSim(sim), change }),
  });
}

/** Dispatch nulls `sim_id` on its operations; evidence deletes the SIM's evidences and reconciliations. */
export async function simDeleted(em: EntityManager, simId: string): Promise<void> {
  await enqueueEvent(em, "fleet", {
    topic: Topics.fleet,
    key: simId,
    schema: SimDeletedSchema,
    message: create(SimDeletedSchema, { simId }),
  });
}

export async function productionDataReset(
  em: EntityManager,
  deleted: Record<string, number>,
  agentIds: string[],
  at: Date,
): Promise<void> {
  await enqueueEvent(em, "fleet", {
    topic: Topics.fleet,
    key: "reset",
    schema: ProductionDataResetSchema,
    message: create(ProductionDataResetSchema, {
      deleted: Object.fromEntries(Object.entries(deleted).map(([k, v]) => [k, BigInt(v)])),
      deletedAgentIds: agentIds,
      resetAt: ts(at),
    }),
  });
}
