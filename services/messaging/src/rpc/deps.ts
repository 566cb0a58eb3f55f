import type { Database, Logger } from "@transferops/kit";
import type { MessagingConfig } from "../config.ts";
import type { AgentDirectory } from "./fleet-port.ts";

export interface MessagingDeps {
  db: Database;
  config: MessagingConfig;
  /** Fleet's agents, to check collaborators. */
  agents: AgentDirectory;
  /** Asks the outbox relay for a pass after a commit that wrote events. */
  published(): void;
  /** Wakes the import worker after an import is queued. */
  importQueued(): void;
  log: Logger;
}
