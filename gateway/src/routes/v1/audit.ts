import { z } from "zod";
import { AuditEntrySchema, type AuditEntry } from "@transferops/kit/gen/transferops/fleet/v1/fleet_pb";
import { toContractJson } from "../../http/json.ts";
import { ok, pageLimit, queryBool, queryInt, route, type Route } from "../../http/route.ts";
import { WINDOW_DESCRIPTION, withReasons } from "../../http/reasons.ts";
import { FLEET } from "../../http/service-reasons.ts";
import { contractSchema } from "../../http/contract-schema.ts";

// The audit log fleet writes on every admin action (docs/decisions/fleet.md). Not in the
// contract: an additive admin route for the board.

const auditJson = (a: AuditEntry) => ({ ...toContractJson(AuditEntrySchema, a), details: a.details ?? {} });

const EXAMPLE = {
  entry_id: "1042",
  at: "2026-11-26T05:10:00.000Z",
  actor_agent_id: "6f1d2c3b-8a4e-4f5d-9c2b-1a2b3c4d5e6f",
  action: "sim.freeze",
  target_id: "0b7c9d2e-3f4a-4b5c-8d6e-7f8a9b0c1d2e",
  details: { from: "active", to: "frozen" },
};

export const auditRoutes: Route[] = [
  route({
    operationId: "listAuditEntries",
    method: "get",
    path: "/v1/audit",
    tag: "Admin",
    summary: "The audit log, newest first: who did what to which subject (admin)",
    auth: ["session"],
    description:
      "`action` is exact (`sim.freeze`) or, ending in `*`, a prefix (`sim.*`); `target` an exact subject id; " +
      "`actor` the acting agent's id. Paging: `before` is the `entry_id` of the last entry shown; the next page " +
      "holds the entries older than it. Details never show a secret: values under a secret's name (PIN, password, " +
      "token, secret, ciphertext, hash, API key) read `[redacted]` and URLs lose their query. " +
      WINDOW_DESCRIPTION,
    query: z.object({
      action: z.string().max(100).optional(),
      target: z.string().max(200).optional(),
      actor: z.string().max(36).optional(),
      limit: pageLimit().optional(),
      before: z.string().max(18).optional(),
      days: queryInt(1, 365).optional(),
      from: z.string().max(10).optional(),
      to: z.string().max(10).optional(),
      all: queryBool().optional(),
    }),
    responses: withReasons(
      {
        200: {
          description: "Array of audit entries, newest first (limit default 50, at most 250)",
          schema: z.array(contractSchema(AuditEntrySchema)),
          example: [EXAMPLE],
        },
        401: "Not signed in",
        403: "Admin required",
        422: "Bad limit, actor, before, days or dates",
      },
      FLEET,
      ["session_required", "agent_inactive", "admin_required"],
    ),
    async handle({ caller, query, services }) {
      const res = await services.fleet.listAuditEntries({
        caller,
        action: query.action ?? "",
        target: query.target ?? "",
        actor: query.actor ?? "",
        limit: query.limit ?? 0,
        before: query.before ?? "",
        window: { days: query.days ?? 0, from: query.from ?? "", to: query.to ?? "", all: query.all ?? false },
      });
      return ok(res.entries.map(auditJson));
    },
  }),
];
