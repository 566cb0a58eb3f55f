import { on, Topics } from "@transferops/kit";
import {
  DeviceChangedSchema,
  DeviceDeletedSchema,
  SimChangedSchema,
  type SimChanged,
  SimDeletedSchema,
} from "@transferops/kit/gen/transferops/fleet/v1/events_pb";
import { recordDeviceStatus } from "../store/queue.ts";
import { announceDeviceWork, type IdleDevices } from "../store/idle-devices.ts";
import { forgetReference, holdQueued, lockOperationsOf, rerouteQueued } from "../store/fleet-changes.ts";
import { move } from "./transitions.ts";

export const fleetTopics = [Topics.fleet];

/**
 * What dispatch learns from fleet. Each handler runs in the inbox transaction, so a
 * redelivered event changes nothing; its own events go to the outbox in the same
 * transaction.
 */
export function fleetHandlers(now: () => Date, idle: IdleDevices) {
  return [
    // Operations keep their rows with sim_id nulled. Queued work on that SIM can never
    // be dialled: it fails now rather than at a handset's poll.
    on(SimDeletedSchema, async (em, event) => {
      if (!event.simId) return;
      const at = now();
      for (const op of await lockOperationsOf(em, "sim_id", event.simId, ["queued"])) {
        await move(
          em,
          op,
          { type: "dispatch_fault" },
          { failure_reason: "sim_deleted", finished_at: at },
          { trigger: "dispatch_fault", failure_reason: "sim_deleted", at },
        );
      }
      await forgetReference(em, "sim_id", event.simId);
    }),

    // Operations keep sim_id, their device_id is nulled. Queued work fails (never
    // dialled); a running operation may have been dialled, so it waits for a person or
    // a late message in no_evidence.
    on(DeviceDeletedSchema, async (em, event) => {
      if (!event.deviceId) return;
      const at = now();
      for (const op of await lockOperationsOf(em, "device_id", event.deviceId, ["queued", "running"])) {
        await move(
          em,
          op,
          { type: "device_deleted" },
          { failure_reason: "device_deleted", finished_at: at },
          { trigger: "device_deleted", failure_reason: "device_deleted", at },
        );
      }
      await forgetReference(em, "device_id", event.deviceId);
      await recordDeviceStatus(em, event.deviceId, "deleted", now());
    }),

    // A handset frozen (the circuit breaker trips) is handed no queued work until it is
    // restored; what it runs already may still report its outcome.
    on(DeviceChangedSchema, async (em, event, meta) => {
      if (!event.deviceId) return;
      await recordDeviceStatus(em, event.deviceId, event.status, meta.occurredAt);
    }),

    // A SIM assigned or moved to another handset or slot: its queued work follows it. A
    // SIM unassigned: its queued work leaves the old handset and waits for the next
    // assignment (a create racing the unassignment stayed queued on it).
    // Any other change (a balance, a label) moves nothing: skipped without a transaction.
    on(
      SimChangedSchema,
      async (em, event) => {
        const sim = event.sim!;
        if (queuedWorkMove(event) === "hold") {
          await holdQueued(em, sim.simId);
          return;
        }
        const deviceId = sim.deviceId!;
        const moved = await rerouteQueued(em, sim.simId, deviceId, sim.subscriptionSlot ?? null);
        if (moved > 0) {
          await announceDeviceWork(em, deviceId);
          idle.forget(deviceId);
        }
      },
      (event) => queuedWorkMove(event) !== null,
    ),
  ];
}

/** What a SIM's change does to its queued work: held (unassigned), re-routed (assigned, moved), or nothing. */
function queuedWorkMove(event: SimChanged): "hold" | "reroute" | null {
  if (!event.sim) return null;
  if (event.change === "unassigned") return "hold";
  if (event.sim.deviceId && (event.change === "assigned" || event.change === "updated")) return "reroute";
  return null;
}
