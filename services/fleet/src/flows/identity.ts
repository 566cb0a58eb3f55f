import { randomUUID } from "node:crypto";
import type { Caller, Database, EntityManager } from "@transferops/kit";
import type { FleetConfig } from "../config.ts";
import { sessionExpiry, type AgentRecord, type Role } from "../domain/agents.ts";
import { signInAttack } from "../domain/alerts.ts";
import { loginTaken, notFound, refusal } from "../domain/reasons.ts";
import { hashPassword, hashToken, newToken, verifyPassword } from "../domain/secrets.ts";
import { agentChanged } from "../events/agents.ts";
import { raiseAlert } from "../events/alerts.ts";
import {
  adminExists,
  lockBootstrap,
  audit,
  findAgent,
  findAgentByLogin,
  findAgentForUpdate,
  insertAgent,
  listAgents as listAgentRows,
  updateAgent as updateAgentRow,
} from "../store/agents.ts";
import { credentialKey, type CredentialChanges } from "../store/credentials.ts";
import { findLiveSession, insertSession, revokeAgentSessions, revokeSession } from "../store/sessions.ts";

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

/** A transaction that ends the answers of `agentId`'s sessions, announced to every replica's watchers. */
const agentTx = <T>(deps: IdentityDeps, agentId: string, work: (em: EntityManager) => Promise<T>) =>
  deps.credentials.change([credentialKey.agent(agentId)], work);

/** The live session whose token has this hash. */
export async function liveSession(deps: IdentityDeps, tokenHash: string) {
  return findLiveSession(deps.db.em(), tokenHash);
}

export interface NewAgent {
  login: string;
  fullName: string;
  role: Role;
  passwordHash: string;
}

/** The first admin, once: two racing requests cannot both find no admin. */
export async function bootstrapAdmin(deps: IdentityDeps, a: Omit<NewAgent, "role">): Promise<AgentRecord> {
  const agent = await deps.db.tx(async (em) => {
    // One bootstrap at a time: two racing requests cannot both find no admin.
    await lockBootstrap(em);
    if (await adminExists(em)) {
      throw refusal("admin_exists", "An admin already exists");
    }
    const created = await insertAgent(em, {
      id: randomUUID(),
      login: a.login,
      full_name: a.fullName,
      role: "admin",
      password_hash: a.passwordHash,
    });
    if (!created) throw loginTaken(a.login);
    await audit(em, { actor: created.id, action: "agent.bootstrap_admin", target: created.id });
    await agentChanged(em, created, "created");
    return created;
  });
  deps.published();
  return agent;
}

/** A new session for a valid login and password of an active agent. */
export async function signIn(deps: IdentityDeps, login: string, password: string) {
  const { db, config } = deps;
  const agent = await findAgentByLogin(db.em(), login);
  const ok = await verifyPassword(password, agent?.password_hash);
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
  return { token, agent, expiresAt };
}

/** Raises the sign-in attack alert for a login. */
export async function reportSignInAttack(deps: IdentityDeps, login: string): Promise<void> {
  await deps.db.tx((em) => raiseAlert(em, signInAttack(login, new Date())));
  deps.published();
}

/** Ends one session. */
export async function signOut(deps: IdentityDeps, sessionId: string): Promise<void> {
  await deps.credentials.change([credentialKey.session(sessionId)], (em) => revokeSession(em, sessionId));
}

/** The agent, or 404. */
export async function agentOf(deps: IdentityDeps, agentId: string): Promise<AgentRecord> {
  const agent = await findAgent(deps.db.em(), agentId);
  if (!agent) throw notFound("agent", agentId);
  return agent;
}

/** A new password after the current one, every session of the agent ended. */
export async function changeOwnPassword(
  deps: IdentityDeps,
  agentId: string,
  currentPassword: string,
  newPassword: string,
): Promise<void> {
  const agent = await agentOf(deps, agentId);
  if (!(await verifyPassword(currentPassword, agent.password_hash))) {
    throw refusal("wrong_password", "Current password is wrong");
  }
  const passwordHash = await hashPassword(newPassword);
  await agentTx(deps, agentId, async (em) => {
    await updateAgentRow(em, agentId, { password_hash: passwordHash, must_change_password: false });
    const revoked = await revokeAgentSessions(em, agentId);
    await audit(em, {
      actor: agentId,
      action: "agent.change_password",
      target: agentId,
      details: { sessions_revoked: revoked },
    });
  });
}

/** A new agent, audited, AgentChanged. */
export async function createAgent(deps: IdentityDeps, actor: string, a: NewAgent): Promise<AgentRecord> {
  const agent = await deps.db.tx(async (em) => {
    const created = await insertAgent(em, {
      id: randomUUID(),
      login: a.login,
      full_name: a.fullName,
      role: a.role,
      password_hash: a.passwordHash,
    });
    if (!created) throw loginTaken(a.login);
    await audit(em, { actor, action: "agent.create", target: created.id, details: { role: a.role } });
    await agentChanged(em, created, "created");
    return created;
  });
  deps.published();
  return agent;
}

/** Every agent. */
export async function listAgents(deps: IdentityDeps): Promise<AgentRecord[]> {
  return listAgentRows(deps.db.em());
}

export interface AgentPatch {
  fullName?: string;
  isActive?: boolean;
  role?: Role;
}

/**
 * An admin's change of an agent, audited, AgentChanged. Deactivation by this route ends
 * the agent's sessions as the deactivate route does: setting the agent active again
 * revives none of them.
 */
export async function updateAgent(
  deps: IdentityDeps,
  actor: string,
  agentId: string,
  patch: AgentPatch,
): Promise<AgentRecord> {
  const { fullName, isActive, role } = patch;
  const agent = await agentTx(deps, agentId, async (em) => {
    const existing = await findAgentForUpdate(em, agentId);
    if (!existing) throw notFound("agent", agentId);
    const updated = (await updateAgentRow(em, agentId, { full_name: fullName, is_active: isActive, role }))!;
    const revoked = isActive === false ? await revokeAgentSessions(em, agentId) : 0;
    await audit(em, {
      actor,
      action: "agent.update",
      target: agentId,
      details: {
        full_name: fullName,
        is_active: isActive,
        role,
        ...(isActive === false ? { sessions_revoked: revoked } : {}),
      },
    });
    await agentChanged(em, updated, "updated");
    return updated;
  });
  deps.published();
  return agent;
}

/** Deactivates the agent and ends its sessions (idempotent), audited, AgentChanged. */
export async function deactivateAgent(deps: IdentityDeps, actor: string, agentId: string): Promise<void> {
  await agentTx(deps, agentId, async (em) => {
    const existing = await findAgentForUpdate(em, agentId);
    if (!existing) throw notFound("agent", agentId);
    const revoked = await revokeAgentSessions(em, agentId);
    if (!existing.is_active && revoked === 0) return; // idempotent: nothing changes
    const updated = (await updateAgentRow(em, agentId, { is_active: false }))!;
    await audit(em, {
      actor,
      action: "agent.deactivate",
      target: agentId,
      details: { sessions_revoked: revoked },
    });
    await agentChanged(em, updated, "deactivated");
  });
  deps.published();
}

/** A temporary password the agent must change, every session ended, audited, AgentChanged. */
export async function setTemporaryPassword(
  deps: IdentityDeps,
  actor: string,
  agentId: string,
  passwordHash: string,
): Promise<AgentRecord> {
  const agent = await agentTx(deps, agentId, async (em) => {
    const existing = await findAgentForUpdate(em, agentId);
    if (!existing) throw notFound("agent", agentId);
    const updated = (await updateAgentRow(em, agentId, { password_hash: passwordHash, must_change_password: true }))!;
    const revoked = await revokeAgentSessions(em, agentId);
    await audit(em, {
      actor,
      action: "agent.temporary_password",
      target: agentId,
      details: { sessions_revoked: revoked },
    });
    await agentChanged(em, updated, "password_reset");
    return updated;
  });
  deps.published();
  return agent;
}
