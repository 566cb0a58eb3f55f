import { openDatabase } from "@transferops/kit";
import { loadFleetConfig } from "./config.ts";
import { migrations } from "./store/migrations/index.ts";

/** Applies the fleet schema's pending migrations and exits (the Helm migration job). */
const config = loadFleetConfig();
const db = await openDatabase({ url: config.databaseUrl, schema: "fleet", migrations });
await db.close();
