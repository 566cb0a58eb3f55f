import { openDatabase } from "@transferops/kit";
import { loadAnalyticsConfig } from "./config.ts";
import { migrations } from "./store/migrations/index.ts";

const config = loadAnalyticsConfig();
await (await openDatabase({ url: config.databaseUrl, schema: "analytics", migrations })).close();
