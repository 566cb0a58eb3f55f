import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { fromTs, isUuid } from "@transferops/kit";
import { DispatchAgentSchema } from "@transferops/kit/gen/transferops/fleet/v1/fleet_pb";
import type { FleetService } from "@transferops/kit/gen/transferops/fleet/v1/fleet_service_pb";
import { open, pinAad } from "../domain/pin-crypto.ts";
import { invalid, notFound, refusal } from "../domain/reasons.ts";
import { checkReading } from "../domain/sims.ts";
import { findGrant } from "../store/access.ts";
import { findAgent } from "../store/agents.ts";
import { findSim, readDispatchContext, readPinForReveal } from "../store/sims.ts";
import { applyReading } from "../flows/balance.ts";
import type { FleetDeps } from "../flows/ports.ts";
import { toCandidate, toGrant, toSimSummary } from "../flows/mappers.ts";

// The RPCs other services call. They carry no caller of their own: the gateway never
// exposes them, and the network policy admits only the platform's services to fleet.

type Impl = Pick<
  ServiceImpl<typeof FleetService>,
  "getDispatchContext" | "revealPin" | "recordProvenBalance" | "lookupSim" | "getAgentScope"
>;

export function internalHandlers(deps: FleetDeps): Impl {
  const { db, config } = deps;
  return {
    async getDispatchContext(req) {
      // One statement (every create comes here): the named SIM whatever its operator (dispatch
      // tells the caller what is wrong with it), else every SIM of the operator, else all.
      const { breakerActive, agent, grant, sims } = await readDispatchContext(db.em(), {
        agentId: req.agentId,
        simId: req.simId,
        operator: req.operator || undefined,
      });
      return {
        breakerActive,
        agent: create(DispatchAgentSchema, {
          agentId: req.agentId,
          fullName: agent?.full_name ?? "",
          role: agent?.role ?? "",
          isActive: agent?.is_active ?? false,
          exists: agent !== undefined,
        }),
        grant: agent && grant ? toGrant(agent, grant) : undefined,
        sims: sims.map(toCandidate),
      };
    },

    async revealPin(req) {
      if (!isUuid(req.simId)) throw notFound("sim", req.simId);
      // One transaction of one statement (every claim comes here): the read and the audit of a
      // PIN going out; a PIN that does not open is refused and its audit rolled back. Only to a device whose
      // token stands now, read in this transaction (the gateway may have remembered the
      // device's authentication: a token revoked or replaced since gets nothing), and only to
      // the device that holds the SIM now: a create that raced an unassignment or a move left
      // its work on the old handset, and dispatch moves it on the `moved` answer (nothing
      // revealed, nothing audited).
      return db.tx(async (em) => {
        const device = req.deviceId ? { id: req.deviceId, tokenVersion: req.deviceTokenVersion } : undefined;
        const sealed = await readPinForReveal(em, req.simId, req.operationId, device);
        if (!sealed) throw notFound("sim", req.simId);
        if (device && !sealed.token_stands) {
          throw refusal("credentials_invalid", "Missing or invalid credentials");
        }
        if (req.deviceId && sealed.device_id !== req.deviceId) {
          return {
            pin: "",
            moved: { deviceId: sealed.device_id ?? undefined, subscriptionSlot: sealed.subscription_slot ?? undefined },
          };
        }
        let pin: string;
        try {
          pin = open(
            config.pinKeyring,
            { keyId: sealed.pin_key_id, ciphertext: Buffer.from(sealed.pin_ciphertext) },
            pinAad(req.simId),
          );
        } catch (err) {
          deps.log.error(
            { sim_id: req.simId, key_id: sealed.pin_key_id, err: (err as Error).message },
            "PIN does not decrypt",
          );
          throw refusal("pin_unavailable", `The PIN of SIM ${req.simId} cannot be decrypted`, { sim_id: req.simId });
        }
        // The statement audited exactly the reveals that reach this line; never a PIN without its row.
        if (!sealed.audited) throw new Error(`the reveal of SIM ${req.simId}'s PIN was not audited`);
        return { pin };
      });
    },

    async recordProvenBalance(req) {
      const now = new Date();
      const observedAt = fromTs(req.observedAt) ?? now;
      const source = req.source || "sms";
      const problems = checkReading(req.balance, observedAt, source, now);
      if (problems.length) throw invalid(problems);
      if (!isUuid(req.simId)) throw notFound("sim", req.simId);
      const r = await db.tx((em) =>
        applyReading(em, {
          simId: req.simId,
          balance: Number(req.balance),
          observedAt,
          source,
          via: "proof",
          messageId: req.messageId,
        }),
      );
      deps.published();
      return {
        applied: r.applied,
        previousBalance: r.previous === null ? undefined : BigInt(r.previous),
        balance: r.sim.balance_mirror === null ? undefined : BigInt(r.sim.balance_mirror),
      };
    },

    async lookupSim(req) {
      const sim = isUuid(req.simId) ? await findSim(db.em(), req.simId) : undefined;
      if (!sim) throw notFound("sim", req.simId);
      return { sim: toSimSummary(sim) };
    },

    async getAgentScope(req) {
      const em = db.em();
      const agent = isUuid(req.agentId) ? await findAgent(em, req.agentId) : undefined;
      if (!agent) return { allowedSimIds: [], role: "", isActive: false, fullName: "", exists: false };
      const grant = await findGrant(em, agent.id);
      return {
        allowedSimIds: grant?.allowed_sim_ids ?? [],
        role: agent.role,
        isActive: agent.is_active,
        fullName: agent.full_name,
        exists: true,
      };
    },
  };
}
