import { openDatabase } from "@transferops/kit";
import { loadMessagingConfig } from "./config.ts";
import { migrations } from "./store/migrations/index.ts";

const config = loadMessagingConfig();
await (await openDatabase({ url: config.databaseUrl, schema: "messaging", migrations })).close();
