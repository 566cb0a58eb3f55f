import { openDatabase } from "@transferops/kit";
import { loadEvidenceConfig } from "./config.ts";
import { migrations } from "./store/migrations/index.ts";

/** Applies the evidence schema's pending migrations and exits (the Helm migration job). */
const config = loadEvidenceConfig();
const db = await openDatabase({ url: config.databaseUrl, schema: "evidence", migrations });
await db.close();
