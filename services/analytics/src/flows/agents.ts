import { listAgents } from "../store/agents.ts";
import type { AnalyticsDeps } from "./ports.ts";

/** The agents analytics has heard of. */
export async function knownAgents(deps: AnalyticsDeps) {
  return listAgents(deps.db.em());
}
