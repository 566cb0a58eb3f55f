import type { ServiceImpl } from "@connectrpc/connect";
import type { FleetService } from "@transferops/kit/gen/transferops/fleet/v1/fleet_service_pb";
import { requireAdmin } from "../domain/agents.ts";
import { auditFilterOf } from "../domain/audit.ts";
import { auditEntries } from "../flows/audit.ts";
import type { FleetDeps } from "../flows/ports.ts";
import { toAuditEntry } from "../flows/mappers.ts";

export function auditHandlers(deps: FleetDeps): Pick<ServiceImpl<typeof FleetService>, "listAuditEntries"> {
  return {
    async listAuditEntries(req) {
      requireAdmin(req.caller);
      const filter = auditFilterOf(req, new Date());
      return { entries: (await auditEntries(deps, filter)).map(toAuditEntry) };
    },
  };
}
