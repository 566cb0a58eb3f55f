import type { Database } from "@transferops/kit";
import type { AnalyticsConfig } from "../config.ts";

/** What every analytics handler and flow may use. Analytics calls no other service. */
export interface AnalyticsDeps {
  db: Database;
  config: AnalyticsConfig;
  /** The consumers' lag per topic, as the bus reports it. */
  lag: ProjectionLag;
}

/** Each consumer group's lag by topic partition, or undefined where the bus cannot tell. */
export type ProjectionLag = () => Promise<Record<string, bigint> | undefined>;
