import type { Caller } from "@transferops/kit";
import { ts } from "@transferops/kit";
import type { FleetService } from "@transferops/kit/gen/transferops/fleet/v1/fleet_service_pb";
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import { isRole, requireAdmin, requireSession, ROLES, type Role } from "../domain/agents.ts";
import { invalid, refusal } from "../domain/reasons.ts";
import {
  hashPassword,
  hashToken,
  matchesAny,
  newTemporaryPassword,
  secretEquals,
  TOKEN_PREFIX,
} from "../domain/secrets.ts";
import {
  agentOf,
  bootstrapAdmin,
  changeOwnPassword,
  createAgent,
  deactivateAgent,
  listAgents,
  liveSession,
  reportSignInAttack,
  setTemporaryPassword,
  signIn,
  signOut,
  updateAgent,
  type IdentityDeps,
} from "../flows/identity.ts";
import { toAgent } from "../flows/mappers.ts";

export type { IdentityDeps };

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
  return { ...credentialHandlers(deps), ...ownAccountHandlers(deps), ...agentAdminHandlers(deps) };
}

/** Credentials: authentication, their changes, the first admin, sign-in and sign-out. */
function credentialHandlers(
  deps: IdentityDeps,
): Pick<Impl, "authenticate" | "watchCredentials" | "bootstrapAdmin" | "login" | "reportSignInAttack" | "logout"> {
  const { config, credentials } = deps;
  return {
    authenticate: (req) => authenticate(deps, req),
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
      const agent = await bootstrapAdmin(deps, { login: req.login, fullName: req.fullName, passwordHash });
      return { agent: toAgent(agent) };
    },
    async login(req) {
      const { token, agent, expiresAt } = await signIn(deps, req.login, req.password);
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
      await reportSignInAttack(deps, req.login);
      return {};
    },
    async logout(req) {
      requireSessionAllowInactive(req.caller);
      await signOut(deps, req.caller!.sessionId);
      return {};
    },
  };
}

/** Who a secret is: an API key, a messaging key, a session or a handset's token; anything else is refused. */
async function authenticate(deps: IdentityDeps, req: { secret: string; credentialKind: string }) {
  const { config } = deps;
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
  const session = isDevice ? null : await liveSession(deps, hash);
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
}

/** An agent's own account. */
function ownAccountHandlers(deps: IdentityDeps): Pick<Impl, "getOwnProfile" | "changeOwnPassword"> {
  return {
    async getOwnProfile(req) {
      requireSessionAllowInactive(req.caller);
      return { agent: toAgent(await agentOf(deps, req.caller!.agentId)) };
    },
    async changeOwnPassword(req) {
      requireSessionAllowInactive(req.caller);
      await changeOwnPassword(deps, req.caller!.agentId, req.currentPassword, req.newPassword);
      return {};
    },
  };
}

/** An admin's management of agents. */
function agentAdminHandlers(
  deps: IdentityDeps,
): Pick<Impl, "createAgent" | "listAgents" | "updateAgent" | "deactivateAgent" | "issueTemporaryPassword"> {
  return {
    async createAgent(req) {
      requireAdmin(req.caller);
      const role = roleOf(req.role, "agent");
      const passwordHash = await hashPassword(req.password);
      const agent = await createAgent(deps, req.caller!.agentId, {
        login: req.login,
        fullName: req.fullName,
        role,
        passwordHash,
      });
      return { agent: toAgent(agent) };
    },
    async listAgents(req) {
      requireAdmin(req.caller);
      return { agents: (await listAgents(deps)).map(toAgent) };
    },
    async updateAgent(req) {
      requireAdmin(req.caller);
      const role = req.role === undefined ? undefined : roleOf(req.role, "agent");
      const agent = await updateAgent(deps, req.caller!.agentId, req.agentId, {
        fullName: req.fullName,
        isActive: req.isActive,
        role,
      });
      return { agent: toAgent(agent) };
    },
    async deactivateAgent(req) {
      requireAdmin(req.caller);
      await deactivateAgent(deps, req.caller!.agentId, req.agentId);
      return {};
    },
    async issueTemporaryPassword(req) {
      requireAdmin(req.caller);
      const temporary = newTemporaryPassword();
      const passwordHash = await hashPassword(temporary);
      const agent = await setTemporaryPassword(deps, req.caller!.agentId, req.agentId, passwordHash);
      return { agentId: agent.id, login: agent.login, temporaryPassword: temporary };
    },
  };
}

/** Own-account routes stay open to an inactive agent's live session only to sign out or read itself. */
function requireSessionAllowInactive(caller: Caller | undefined): void {
  requireSession(caller ? { ...caller, isActive: true } : undefined);
}
