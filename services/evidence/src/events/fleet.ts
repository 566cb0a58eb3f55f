import { on, Topics } from "@transferops/kit";
import { SimDeletedSchema } from "@transferops/kit/gen/transferops/fleet/v1/events_pb";
import { deleteSimMessages, lockSim } from "../store/messages.ts";
import { messagesPurged } from "./messages.ts";

export const fleetTopics = [Topics.fleet];

/**
 * A deleted SIM takes its evidences and daily reconciliations with it (the contract's
 * DELETE /sims). Under the SIM's lock, so a correlation in flight finishes first.
 */
export const fleetHandlers = [
  on(SimDeletedSchema, async (em, event) => {
    if (!event.simId) return;
    await lockSim(em, event.simId);
    const deleted = await deleteSimMessages(em, event.simId);
    await messagesPurged(em, { simId: event.simId, reason: "sim_deleted", messages: deleted.messages });
  }),
];
