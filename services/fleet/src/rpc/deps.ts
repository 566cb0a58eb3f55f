import type { Client } from "@connectrpc/connect";
import type { Database, Logger } from "@transferops/kit";
import type { DispatchService } from "@transferops/kit/gen/transferops/dispatch/v1/dispatch_service_pb";
import type { EvidenceService } from "@transferops/kit/gen/transferops/evidence/v1/evidence_service_pb";
import type { FleetConfig } from "../config.ts";
import type { CredentialChanges } from "../store/credentials.ts";

/** What every fleet handler group receives. */
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
