import { openDatabase } from "@transferops/kit";
import { loadIntakeConfig } from "./config.ts";
import { migrations } from "./store/migrations/index.ts";

const config = loadIntakeConfig();
await (await openDatabase({ url: config.databaseUrl, schema: "intake", migrations })).close();
