import { messagesPurged } from "../events/messages.ts";
import { deleteAllMessages } from "../store/messages.ts";
import type { FlowDeps } from "./ports.ts";

/** Deletes every message and daily reconciliation, announced as one purge. */
export async function resetEvidence(deps: FlowDeps): Promise<{ messages: number; reconciliations: number }> {
  const deleted = await deps.db.tx(async (em) => {
    const d = await deleteAllMessages(em);
    await messagesPurged(em, { simId: "", reason: "reset", messages: d.messages });
    return d;
  });
  deps.published();
  return deleted;
}
