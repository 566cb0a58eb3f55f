import { ROLES } from "@transferops/kit";
import { z } from "zod";
import { AgentSchema } from "@transferops/kit/gen/transferops/fleet/v1/fleet_pb";
import {
  LoginResponseSchema,
  IssueTemporaryPasswordResponseSchema,
} from "@transferops/kit/gen/transferops/fleet/v1/fleet_service_pb";
import { Code, ConnectError } from "@connectrpc/connect";
import { HttpError } from "../../http/errors.ts";
import { toContractJson } from "../../http/json.ts";
import { created, noContent, ok, route, text, type Route } from "../../http/route.ts";
import { adminOnly, GATEWAY_REASONS, reasonsOf, withReasons } from "../../http/reasons.ts";
import { FLEET } from "../../http/service-reasons.ts";
import { contractSchema } from "../../http/contract-schema.ts";

const agentJson = (a: Parameters<typeof toContractJson>[1] | undefined) => toContractJson(AgentSchema, a!);

const role = z.enum(ROLES);
const newAgentBody = z.object({
  login: text(100),
  full_name: text(200),
  password: text(100),
  role: role.optional(),
});

export const agentRoutes: Route[] = [
  route({
    operationId: "login",
    method: "post",
    path: "/v1/agents/login",
    tag: "Agents",
    summary: "Sign in; the token lasts 5 hours and is not extended by use",
    auth: "none",
    body: z.object({ login: text(100), password: text(100) }),
    responses: withReasons(
      {
        200: {
          description: "token, agent_id, role, expires_at, must_change_password",
          schema: contractSchema(LoginResponseSchema),
        },
        401: "Wrong login or password",
        429: {
          description: "Too many failed sign-ins for this login or from this address",
          reasons: reasonsOf(GATEWAY_REASONS, "login_throttled"),
        },
      },
      FLEET,
      ["login_failed"],
    ),
    async handle({ body, services, req, loginThrottle }) {
      // The client's address as the rate limiter reads it (behind the trusted proxies).
      const address = req.ip ?? req.socket.remoteAddress ?? "unknown";
      const wait = loginThrottle.wait(body.login, address);
      if (wait > 0) {
        throw new HttpError("rate_limited", "Too many failed sign-ins; try again later", {
          reason: "login_throttled",
          context: { retry_after_s: wait },
          headers: { "Retry-After": String(wait) },
        });
      }
      try {
        return ok(toContractJson(LoginResponseSchema, await services.fleet.login(body)));
      } catch (err) {
        if (err instanceof ConnectError && err.code === Code.Unauthenticated) loginThrottle.failed(body.login, address);
        throw err;
      }
    },
  }),
  route({
    operationId: "logout",
    method: "post",
    path: "/v1/agents/logout",
    tag: "Agents",
    summary: "Revoke the current session",
    auth: ["session"],
    endsCredentials: true,
    allowInactive: true,
    allowTemporaryPassword: true,
    responses: { 204: "Revoked", 401: "Not signed in" },
    async handle({ caller, services }) {
      await services.fleet.logout({ caller });
      return noContent();
    },
  }),
  route({
    operationId: "getOwnProfile",
    method: "get",
    path: "/v1/agents/me",
    tag: "Agents",
    summary: "The signed-in agent's profile",
    auth: ["session"],
    allowInactive: true,
    allowTemporaryPassword: true,
    responses: withReasons(
      {
        200: { description: "Agent profile", schema: contractSchema(AgentSchema) },
        401: "Not signed in",
        404: "Agent gone",
      },
      FLEET,
      ["session_required", "agent_not_found"],
    ),
    async handle({ caller, services }) {
      const res = await services.fleet.getOwnProfile({ caller });
      return ok(agentJson(res.agent));
    },
  }),
  route({
    operationId: "changeOwnPassword",
    method: "patch",
    path: "/v1/agents/me/password",
    tag: "Agents",
    summary: "Change own password; revokes every session and clears must_change_password",
    auth: ["session"],
    endsCredentials: true,
    allowInactive: true,
    allowTemporaryPassword: true,
    body: z.object({ current_password: text(100), new_password: text(100) }),
    responses: withReasons(
      { 204: "Changed", 401: "Not signed in or wrong current password", 404: "Agent gone" },
      FLEET,
      ["session_required", "wrong_password", "agent_not_found"],
    ),
    async handle({ caller, body, services }) {
      await services.fleet.changeOwnPassword({
        caller,
        currentPassword: body.current_password,
        newPassword: body.new_password,
      });
      return noContent();
    },
  }),
  route({
    operationId: "bootstrapAdmin",
    method: "post",
    path: "/v1/agents/bootstrap",
    tag: "Agents",
    summary: "Create the first admin (header X-Bootstrap-Token; only while no admin exists)",
    auth: "none",
    headers: [{ name: "X-Bootstrap-Token", description: "The server's BOOTSTRAP_TOKEN", required: true }],
    description:
      "Creates the first admin while none exists and the X-Bootstrap-Token header matches the server's. `role` is ignored whatever its value (not validated): the account is always admin.",
    requestExample: { login: "root", full_name: "Root Admin", password: "a-long-password" },
    // The contract: "role ignored, account is always admin", so a role of any value is dropped, not validated.
    body: newAgentBody.omit({ role: true }),
    responses: withReasons(
      {
        201: { description: "Agent profile (always admin)", schema: contractSchema(AgentSchema) },
        403: "Token absent, wrong or unset",
        409: "An admin exists or login taken",
      },
      FLEET,
      ["bootstrap_refused", "admin_exists", "login_exists"],
    ),
    async handle({ body, req, services }) {
      const res = await services.fleet.bootstrapAdmin({
        bootstrapToken: req.header("x-bootstrap-token") ?? "",
        login: body.login,
        fullName: body.full_name,
        password: body.password,
      });
      return created(agentJson(res.agent));
    },
  }),
  route({
    operationId: "createAgent",
    method: "post",
    path: "/v1/agents/admin",
    tag: "Agents",
    summary: "Create an agent (admin)",
    auth: ["session"],
    body: newAgentBody,
    responses: adminOnly(
      {
        201: { description: "Agent profile", schema: contractSchema(AgentSchema) },
        409: "Login exists",
        422: "Invalid body",
      },
      FLEET,
      ["login_exists"],
    ),
    async handle({ caller, body, services }) {
      const res = await services.fleet.createAgent({
        caller,
        login: body.login,
        fullName: body.full_name,
        password: body.password,
        role: body.role ?? "agent",
      });
      return created(agentJson(res.agent));
    },
  }),
  route({
    operationId: "listAgents",
    method: "get",
    path: "/v1/agents/admin",
    tag: "Agents",
    summary: "List every agent (admin)",
    auth: ["session"],
    responses: adminOnly(
      { 200: { description: "Array of agent profiles", schema: z.array(contractSchema(AgentSchema)) } },
      FLEET,
    ),
    async handle({ caller, services }) {
      const res = await services.fleet.listAgents({ caller });
      return ok(res.agents.map((a) => agentJson(a)));
    },
  }),
  route({
    operationId: "updateAgent",
    method: "patch",
    path: "/v1/agents/admin/:agent_id",
    tag: "Agents",
    summary: "Change an agent's name, activity or role (admin)",
    auth: ["session"],
    endsCredentials: true,
    uuidParams: ["agent_id"],
    body: z.object({ full_name: text(200).optional(), is_active: z.boolean().optional(), role: role.optional() }),
    responses: adminOnly(
      {
        200: { description: "Agent profile", schema: contractSchema(AgentSchema) },
        404: "Unknown agent",
        422: "Invalid body",
      },
      FLEET,
      ["agent_not_found"],
    ),
    async handle({ caller, body, params, services }) {
      const res = await services.fleet.updateAgent({
        caller,
        agentId: params.agent_id,
        fullName: body.full_name,
        isActive: body.is_active,
        role: body.role,
      });
      return ok(agentJson(res.agent));
    },
  }),
  route({
    operationId: "deactivateAgent",
    method: "post",
    path: "/v1/agents/admin/:agent_id/deactivate",
    tag: "Agents",
    summary: "Deactivate an agent and revoke its sessions; the account is kept (admin, idempotent)",
    auth: ["session"],
    endsCredentials: true,
    uuidParams: ["agent_id"],
    responses: adminOnly({ 204: "Deactivated", 404: "Unknown agent" }, FLEET, ["agent_not_found"]),
    async handle({ caller, params, services }) {
      await services.fleet.deactivateAgent({ caller, agentId: params.agent_id });
      return noContent();
    },
  }),
  route({
    operationId: "issueTemporaryPassword",
    method: "post",
    path: "/v1/agents/admin/:agent_id/temporary-password",
    tag: "Agents",
    summary: "Issue a temporary password, returned once; forces a change and revokes sessions (admin)",
    auth: ["session"],
    endsCredentials: true,
    uuidParams: ["agent_id"],
    responses: adminOnly(
      {
        200: {
          description: "agent_id, login, temporary_password",
          schema: contractSchema(IssueTemporaryPasswordResponseSchema),
        },
        404: "Unknown agent",
      },
      FLEET,
      ["agent_not_found"],
    ),
    async handle({ caller, params, services }) {
      const res = await services.fleet.issueTemporaryPassword({ caller, agentId: params.agent_id });
      return ok(toContractJson(IssueTemporaryPasswordResponseSchema, res));
    },
  }),
];
