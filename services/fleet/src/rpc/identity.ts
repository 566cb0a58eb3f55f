import { randomUUID } from "node:crypto";
import { ts, type Caller, type Database, type EntityManager } from "@transferops/kit";
import type { FleetService } from "@transferops/kit/gen/transferops/fleet/v1/fleet_service_pb";
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import { isRole, requireAdmin, requireSession, ROLES, sessionExpiry, type Role } from "../domain/agents.ts";
import { invalid, loginTaken, notFound, refusal } from "../domain/reasons.ts";
import {
  hashPassword,
  hashToken,
  matchesAny,
  newTemporaryPassword,
  newToken,
  secretEquals,
  TOKEN_PREFIX,
  verifyPassword,
} from "../domain/secrets.ts";
import {
  adminExists,
  lockBootstrap,
  audit,
  findAgent,
  findAgentByLogin,
  findAgentForUpdate,
  insertAgent,
  listAgents,
  updateAgent,
} from "../store/agents.ts";
import { findLiveSession, insertSession, revokeAgentSessions, revokeSession } from "../store/sessions.ts";
import { credentialKey, type CredentialChanges } from "../store/credentials.ts";
import { agentChanged } from "../events/agents.ts";
import { raiseAlert } from "../events/alerts.ts";
import { signInAttack } from "../domain/alerts.ts";
import { toAgent } from "../flows/mappers.ts";
import type { FleetConfig } from "../config.ts";

export interface IdentityDeps {
  db: Database;
  config: FleetConfig;
  /** Called after a commit that wrote to the outbox. */
  published: () => void;
  /** Credential changes: announced in the writes that end an authenticated answer, served to watchers. */
  credentials: CredentialChanges;
  /** Resolves a device token; provided by the device part of fleet. */
  authenticateDevice?: (tokenHash: string) => Promise<Caller | undefined>;
}

const unauthenticated = () => refusal("credentials_invalid", "Missing or invalid credentials");

function roleOf(value: string, fallback: Role): Role {
  if (!value) return fallback;
  if (!isRole(value)) throw invalid([{ field: "role", message: `must be one of ${ROLES.join(", ")}` }]);
  return value;
}

type Impl = Pick<
  ServiceImpl<typeof FleetService>,
  | "authenticate"
  | "watchCredentials"
  | "bootstrapAdmin"
  | "login"
  | "reportSignInAttack"
  | "logout"
  | "getOwnProfile"
  | "changeOwnPassword"
  | "createAgent"
  | "listAgents"
  | "updateAgent"
  | "deactivateAgent"
  | "issueTemporaryPassword"
>;

export function identityHandlers(deps: IdentityDeps): Impl {
  const { db, config, credentials } = deps;
  /** A transaction that ends the answers of `agentId`'s sessions, announced to every replica's watchers. */
  const agentTx = <T>(agentId: string, work: (em: EntityManager) => Promise<T>) =>
    credentials.change([credentialKey.agent(agentId)], work);

  return {
    async authenticate(req) {
      const secret = req.secret;
      if (!secret) throw unauthenticated();
      if (req.credentialKind === "api_key") {
        if (!matchesAny(secret, config.apiKeys)) throw unauthenticated();
        return { caller: { kind: "api_key" } };
      }
      if (req.credentialKind === "messaging_key") {
        if (!matchesAny(secret, config.messagingApiKeys)) throw unauthenticated();
        return { caller: { kind: "messaging_key" } };
      }
      if (req.credentialKind !== "bearer") throw unauthenticated();
      const hash = hashToken(secret);
      // The token's prefix says which table can hold it: a handset's poll costs one lookup.
      const isDevice = secret.startsWith(TOKEN_PREFIX.device);
      const session = isDevice ? null : await findLiveSession(db.em(), hash);
      if (session) {
        return {
          caller: {
            kind: "session",
            agentId: session.id,
            role: session.role,
            isActive: session.is_active,
            fullName: session.full_name,
            sessionId: session.session_id,
            login: session.login,
            mustChangePassword: session.must_change_password,
          },
          validUntil: ts(session.expires_at),
        };
      }
      const device = secret.startsWith(TOKEN_PREFIX.session) ? undefined : await deps.authenticateDevice?.(hash);
      if (device) return { caller: device };
      throw unauthenticated();
    },

    async *watchCredentials(_req, ctx) {
      if (!credentials.live) {
        throw new ConnectError("This replica does not listen for credential changes yet", Code.Unavailable);
      }
      const batches = credentials.watch(ctx.signal);
      yield { ready: true };
      try {
        for await (const b of batches) yield b;
      } catch (err) {
        throw new ConnectError(err instanceof Error ? err.message : String(err), Code.Unavailable);
      }
    },

    async bootstrapAdmin(req) {
      if (!config.bootstrapToken || !req.bootstrapToken || !secretEquals(req.bootstrapToken, config.bootstrapToken)) {
        throw refusal("bootstrap_refused", "Bootstrap token absent, wrong or unset");
      }
      const passwordHash = await hashPassword(req.password);
      const agent = await db.tx(async (em) => {
        // One bootstrap at a time: two racing requests cannot both find no admin.
        await lockBootstrap(em);
        if (await adminExists(em)) {
          throw refusal("admin_exists", "An admin already exists");
        }
        const created = await insertAgent(em, {
          id: randomUUID(),
          login: req.login,
          full_name: req.fullName,
          role: "admin",
          password_hash: passwordHash,
        });
        if (!created) throw loginTaken(req.login);
        await audit(em, { actor: created.id, action: "agent.bootstrap_admin", target: created.id });
        await agentChanged(em, created, "created");
        return created;
      });
      deps.published();
      return { agent: toAgent(agent) };
    },

    async login(req) {
      const agent = await findAgentByLogin(db.em(), req.login);
      const ok = await verifyPassword(req.password, agent?.password_hash);
      if (!agent || !ok || !agent.is_active) throw refusal("login_failed", "Wrong login or password");
      const token = newToken("session");
      const now = new Date();
      const expiresAt = sessionExpiry(now, config.sessionTtlS);
      await insertSession(db.em(), {
        id: randomUUID(),
        agent_id: agent.id,
        token_hash: hashToken(token),
        created_at: now,
        expires_at: expiresAt,
      });
      return {
        token,
        agentId: agent.id,
        role: agent.role,
        expiresAt: ts(expiresAt),
        mustChangePassword: agent.must_change_password,
      };
    },

    async reportSignInAttack(req) {
      if (!req.login || req.login.length > 100) throw invalid([{ field: "login", message: "1 to 100 characters" }]);
      await db.tx((em) => raiseAlert(em, signInAttack(req.login, new Date())));
      deps.published();
      return {};
    },

    async logout(req) {
      requireSessionAllowInactive(req.caller);
      const sessionId = req.caller!.sessionId;
      await credentials.change([credentialKey.session(sessionId)], (em) => revokeSession(em, sessionId));
      return {};
    },

    async getOwnProfile(req) {
      requireSessionAllowInactive(req.caller);
      const agent = await findAgent(db.em(), req.caller!.agentId);
      if (!agent) throw notFound("agent", req.caller!.agentId);
      return { agent: toAgent(agent) };
    },

    async changeOwnPassword(req) {
      requireSessionAllowInactive(req.caller);
      const agentId = req.caller!.agentId;
      const agent = await findAgent(db.em(), agentId);
      if (!agent) throw notFound("agent", agentId);
      if (!(await verifyPassword(req.currentPassword, agent.password_hash))) {
        throw refusal("wrong_password", "Current password is wrong");
      }
      const passwordHash = await hashPassword(req.newPassword);
      await agentTx(agentId, async (em) => {
        await updateAgent(em, agentId, { password_hash: passwordHash, must_change_password: false });
        const revoked = await revokeAgentSessions(em, agentId);
        await audit(em, {
          actor: agentId,
          action: "agent.change_password",
          target: agentId,
          details: { sessions_revoked: revoked },
        });
      });
      return {};
    },

    async createAgent(req) {
      requireAdmin(req.caller);
      const role = roleOf(req.role, "agent");
      const passwordHash = await hashPassword(req.password);
      const agent = await db.tx(async (em) => {
        const created = await insertAgent(em, {
          id: randomUUID(),
          login: req.login,
          full_name: req.fullName,
          role,
          password_hash: passwordHash,
        });
        if (!created) throw loginTaken(req.login);
        await audit(em, { actor: req.caller!.agentId, action: "agent.create", target: created.id, details: { role } });
        await agentChanged(em, created, "created");
        return created;
      });
      deps.published();
      return { agent: toAgent(agent) };
    },

    async listAgents(req) {
      requireAdmin(req.caller);
      return { agents: (await listAgents(db.em())).map(toAgent) };
    },

    async updateAgent(req) {
      requireAdmin(req.caller);
      const role = req.role === undefined ? undefined : roleOf(req.role, "agent");
      const agent = await agentTx(req.agentId, async (em) => {
        const existing = await findAgentForUpdate(em, req.agentId);
        if (!existing) throw notFound("agent", req.agentId);
        const updated = (await updateAgent(em, req.agentId, {
          full_name: req.fullName,
          is_active: req.isActive,
          role,
        }))!;
        // Deactivation by this route ends the agent's sessions as the deactivate route does:
        // setting the agent active again revives none of them.
        const revoked = req.isActive === false ? await revokeAgentSessions(em, req.agentId) : 0;
        await audit(em, {
          actor: req.caller!.agentId,
          action: "agent.update",
          target: req.agentId,
          details: {
            full_name: req.fullName,
            is_active: req.isActive,
            role,
            ...(req.isActive === false ? { sessions_revoked: revoked } : {}),
          },
        });
        await agentChanged(em, updated, "updated");
        return updated;
      });
      deps.published();
      return { agent: toAgent(agent) };
    },

    async deactivateAgent(req) {
      requireAdmin(req.caller);
      await agentTx(req.agentId, async (em) => {
        const existing = await findAgentForUpdate(em, req.agentId);
        if (!existing) throw notFound("agent", req.agentId);
        const revoked = await revokeAgentSessions(em, req.agentId);
        if (!existing.is_active && revoked === 0) return; // idempotent: nothing changes
        const updated = (await updateAgent(em, req.agentId, { is_active: false }))!;
        await audit(em, {
          actor: req.caller!.agentId,
          action: "agent.deactivate",
          target: req.agentId,
          details: { sessions_revoked: revoked },
        });
        await agentChanged(em, updated, "deactivated");
      });
      deps.published();
      return {};
    },

    async issueTemporaryPassword(req) {
      requireAdmin(req.caller);
      const temporary = newTemporaryPassword();
      const passwordHash = await hashPassword(temporary);
      const agent = await agentTx(req.agentId, async (em) => {
        const existing = await findAgentForUpdate(em, req.agentId);
        if (!existing) throw notFound("agent", req.agentId);
        const updated = (await updateAgent(em, req.agentId, {
          password_hash: passwordHash,
          must_change_password: true,
        }))!;
        const revoked = await revokeAgentSessions(em, req.agentId);
        await audit(em, {
          actor: req.caller!.agentId,
          action: "agent.temporary_password",
          target: req.agentId,
          details: { sessions_revoked: revoked },
        });
        await agentChanged(em, updated, "password_reset");
        return updated;
      });
      deps.published();
      return { agentId: agent.id, login: agent.login, temporaryPassword: temporary };
    },
  };
}

/** Own-account routes stay open to an inactive agent's live session only to sign out or read itself. */
function requireSessionAllowInactive(caller: Caller | undefined): void {
  requireSession(caller ? { ...caller, isActive: true } : undefined);
}
