import { parseArgs } from "node:util";
import { openDatabase } from "@transferops/kit";
import { loadEvidenceConfig } from "./config.ts";
import { exportTaught } from "./flows/taught-export.ts";

// Writes what the fleet taught (every active taught rule with the newest texts it read, personal
// values masked) as JSON on standard output, for `npm run corpus:add-taught` in the product's
// repository (docs/decisions/evidence.md, "What the fleet taught"):
//
//   npm run wording:export -w @transferops/evidence -- --from acme-douala --country CM > taught.json
//   (in a cluster: kubectl exec deploy/<release>-evidence -- node --import tsx services/evidence/src/export-taught.ts ...)
const { values } = parseArgs({
  options: { from: { type: "string" }, country: { type: "string", default: "CM" } },
});
if (!values.from || !/^[A-Z]{2}$/.test(values.country ?? "")) {
  process.stderr.write("usage: export-taught --from <deployment name> [--country CM]\n");
  process.exit(2);
}
const config = loadEvidenceConfig();
// No migration: an export reads the schema as the running services left it.
const db = await openDatabase({ url: config.databaseUrl, schema: "evidence", migrations: [], poolMax: 1 });
try {
  const exported = await exportTaught(db, { from: values.from, country: values.country! });
  process.stdout.write(`${JSON.stringify(exported, null, 2)}\n`);
  process.stderr.write(
    `${exported.rules.length} active taught rules, ${exported.rules.reduce((n, r) => n + r.examples.length, 0)} texts\n`,
  );
} finally {
  await db.close();
}
