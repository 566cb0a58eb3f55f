import { openDatabase } from "@transferops/kit";
import { loadFleetConfig } from "./config.ts";
import { reencryptSecrets } from "./jobs/reencrypt.ts";
import { migrations } from "./store/migrations/index.ts";

/**
 * Re-seals stored SIM PINs and webhook secrets under the first key of PIN_ENCRYPTION_KEYS
 * (`<image> reencrypt-pins`; docs/operations.md "Rotating the PIN key"). Prints counts only.
 */
const config = loadFleetConfig();
const db = await openDatabase({ url: config.databaseUrl, schema: "fleet", migrations });
try {
  const result = await reencryptSecrets(db, config.pinKeyring);
  console.log(JSON.stringify({ level: "info", component: "reencrypt-pins", ...result, msg: "re-encrypted" }));
} finally {
  await db.close();
}
