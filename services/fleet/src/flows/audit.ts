import type { AuditFilter } from "../domain/audit.ts";
import { listAudit, type AuditRecord } from "../store/agents.ts";
import type { FleetDeps } from "./ports.ts";

/** The audit entries the filter selects. */
export async function auditEntries(deps: FleetDeps, filter: AuditFilter): Promise<AuditRecord[]> {
  return listAudit(deps.db.em(), filter);
}
