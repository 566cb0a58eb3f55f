import { open, pinAad } from "../domain/pin-crypto.ts";
import { notFound, refusal } from "../domain/reasons.ts";
import { findGrant } from "../store/access.ts";
import { findAgent } from "../store/agents.ts";
import { findSim, readDispatchContext, readPinForReveal } from "../store/sims.ts";
import { applyReading, type Reading } from "./balance.ts";
import type { FleetDeps } from "./ports.ts";

/** The dispatch context of a create: the breaker, the agent, its grant and the candidate SIMs. */
export async function dispatchContext(deps: FleetDeps, q: { agentId: string; simId?: string; operator?: string }) {
  // One statement (every create comes here): the named SIM whatever its operator (dispatch
  // tells the caller what is wrong with it), else every SIM of the operator, else all.
  return readDispatchContext(deps.db.em(), q);
}

export interface Reveal {
  pin: string;
  /** Where the SIM is now, when it left the asking device (nothing revealed). */
  moved?: { deviceId?: string; subscriptionSlot?: number };
}

/**
 * One transaction of one statement (every claim comes here): the read and the audit of a
 * PIN going out; a PIN that does not open is refused and its audit rolled back. Only to a device whose
 * token stands now, read in this transaction (the gateway may have remembered the
 * device's authentication: a token revoked or replaced since gets nothing), and only to
 * the device that holds the SIM now: a create that raced an unassignment or a move left
 * its work on the old handset, and dispatch moves it on the `moved` answer (nothing
 * revealed, nothing audited).
 */
export async function revealPin(
  deps: FleetDeps,
  simId: string,
  operationId: string,
  deviceId: string,
  deviceTokenVersion: string,
): Promise<Reveal> {
  return deps.db.tx(async (em) => {
    const device = deviceId ? { id: deviceId, tokenVersion: deviceTokenVersion } : undefined;
    const sealed = await readPinForReveal(em, simId, operationId, device);
    if (!sealed) throw notFound("sim", simId);
    if (device && !sealed.token_stands) {
      throw refusal("credentials_invalid", "Missing or invalid credentials");
    }
    if (deviceId && sealed.device_id !== deviceId) {
      return {
        pin: "",
        moved: { deviceId: sealed.device_id ?? undefined, subscriptionSlot: sealed.subscription_slot ?? undefined },
      };
    }
    let pin: string;
    try {
      pin = open(
        deps.config.pinKeyring,
        { keyId: sealed.pin_key_id, ciphertext: Buffer.from(sealed.pin_ciphertext) },
        pinAad(simId),
      );
    } catch (err) {
      deps.log.error({ sim_id: simId, key_id: sealed.pin_key_id, err: (err as Error).message }, "PIN does not decrypt");
      throw refusal("pin_unavailable", `The PIN of SIM ${simId} cannot be decrypted`, { sim_id: simId });
    }
    // The statement audited exactly the reveals that reach this line; never a PIN without its row.
    if (!sealed.audited) throw new Error(`the reveal of SIM ${simId}'s PIN was not audited`);
    return { pin };
  });
}

/** A balance proven by an operator SMS (already checked), in one transaction. */
export async function recordProvenBalance(deps: FleetDeps, reading: Reading) {
  const r = await deps.db.tx((em) => applyReading(em, reading));
  deps.published();
  return r;
}

/** The SIM, or 404. */
export async function lookupSim(deps: FleetDeps, simId: string) {
  const sim = await findSim(deps.db.em(), simId);
  if (!sim) throw notFound("sim", simId);
  return sim;
}

/** The agent and its grant, or undefined for an unknown agent. */
export async function agentScope(deps: FleetDeps, agentId: string) {
  const em = deps.db.em();
  const agent = await findAgent(em, agentId);
  if (!agent) return undefined;
  return { agent, grant: await findGrant(em, agent.id) };
}
