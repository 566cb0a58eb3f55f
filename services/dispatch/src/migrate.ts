import { openDatabase } from "@transferops/kit";
import { loadDispatchConfig } from "./config.ts";
import { migrations } from "./store/migrations/index.ts";

/** Applies the dispatch schema's pending migrations and exits (the Helm migration job). */
const config = loadDispatchConfig();
const db = await openDatabase({ url: config.databaseUrl, schema: "dispatch", migrations });
await db.close();
