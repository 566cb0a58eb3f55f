import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { openApiDocument } from "./http/openapi.ts";
import { allRoutes } from "./routes/v1/index.ts";

// Writes the document GET /v1/openapi.json serves, built from the routes without starting
// anything: the OpenAPI lint and the typed client are made from it (npm run lint:openapi,
// npm run generate:client).
const out = process.argv[2] ?? ".cache/openapi.json";
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, JSON.stringify(openApiDocument(allRoutes()), null, 2) + "\n");
console.log(`OpenAPI document written to ${out}`);
