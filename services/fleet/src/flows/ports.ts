import { Code, ConnectError, type Client } from "@connectrpc/connect";
import type { Database, Logger } from "@transferops/kit";
import type {
  DispatchService,
  GetSimActivityResponse,
} from "@transferops/kit/gen/transferops/dispatch/v1/dispatch_service_pb";
import type { EvidenceService } from "@transferops/kit/gen/transferops/evidence/v1/evidence_service_pb";
import type { FleetConfig } from "../config.ts";
import type { CredentialChanges } from "../store/credentials.ts";

/** What every fleet handler group and flow receives. */
export interface FleetDeps {
  db: Database;
  config: FleetConfig;
  log: Logger;
  /** Called after a commit that wrote to the outbox. */
  published: () => void;
  /** Credential changes heard and served to watchers (WatchCredentials). */
  credentials: CredentialChanges;
  dispatch: Client<typeof DispatchService>;
  evidence: Client<typeof EvidenceService>;
}

// Calls fleet makes to dispatch for operations data it does not hold.

export const isUnimplemented = (err: unknown) => err instanceof ConnectError && err.code === Code.Unimplemented;

/**
 * A SIM's operations as dispatch reports them. Any failure is thrown (dispatch unreachable
 * or past the deadline: the route answers 503 outcome_unknown; dispatch's own internal error:
 * 500): fleet never guesses that a SIM is idle.
 */
export async function simActivity(deps: Pick<FleetDeps, "dispatch">, simId: string): Promise<GetSimActivityResponse> {
  return deps.dispatch.getSimActivity({ simId });
}
