// `npm run analytics:rebuild`: empties analytics' schema and rewinds its consumer groups to
// the beginning of the topics, so the next start of analytics replays every event into an
// empty read model. Run it with analytics stopped (Kafka refuses to rewind a group with
// running members); the replay's progress shows as `analytics.lag` in GET /v1/health.
import { createLogger, KafkaBus } from "@transferops/kit";
import { loadAnalyticsConfig } from "./config.ts";
import { CONSUMERS } from "./events/index.ts";
import { rebuildReadModel } from "./jobs/rebuild.ts";

const config = loadAnalyticsConfig();
const log = createLogger("analytics-rebuild", { level: config.env.LOG_LEVEL });
const brokers = (config.env.KAFKA_BROKERS ?? "").split(",").filter(Boolean);
if (!config.databaseUrl || !brokers.length) {
  log.error("DATABASE_URL and KAFKA_BROKERS are required: the in-process bus keeps no history to replay");
  process.exit(2);
}
const bus = new KafkaBus({ brokers, clientId: "analytics-rebuild", prefix: config.env.KAFKA_TOPIC_PREFIX, log });
try {
  await rebuildReadModel(config.databaseUrl, bus);
  log.info({ groups: CONSUMERS.map((c) => c.group) }, "analytics emptied and rewound; start analytics to replay");
} finally {
  await bus.close();
}
