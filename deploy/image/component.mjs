// The image's entry point: the command names the component to run.
//
//   <image> gateway | fleet | dispatch | evidence | intake | analytics | messaging
//   <image> migrate [service...]   apply the schema migrations (every service that has them by default)
//   <image> topics                 create/grow the Kafka topics of KAFKA_TOPICS (the Helm hook job)
//   <image> reencrypt-pins         re-seal stored PINs and webhook secrets under the first PIN key
//   <image> noop                   exit 0 (the last container of the migrations job)
//
// Node runs the TypeScript sources directly (--experimental-transform-types in the image's
// ENTRYPOINT): no build step, no transpile cache, nothing written to the root filesystem.
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const SERVICES = ["fleet", "dispatch", "evidence", "intake", "analytics", "messaging"];
const entryOf = (name) => (name === "gateway" ? "gateway/src/main.ts" : `services/${name}/src/main.ts`);
const migrationOf = (name) => `services/${name}/src/migrate.ts`;
const load = (file) => import(pathToFileURL(path.join(root, file)).href);

const [command = "gateway", ...args] = process.argv.slice(2);
if (command === "gateway" || SERVICES.includes(command)) {
  await load(entryOf(command));
} else if (command === "migrate") {
  const unknown = args.filter((a) => !SERVICES.includes(a));
  if (unknown.length) fail(`migrate: unknown service(s) ${unknown.join(", ")}`);
  const names = (args.length ? args : SERVICES).filter((s) => existsSync(path.join(root, migrationOf(s))));
  for (const name of names) {
    console.log(JSON.stringify({ level: "info", component: "migrate", service: name, msg: "applying migrations" }));
    await load(migrationOf(name));
  }
  console.log(JSON.stringify({ level: "info", component: "migrate", services: names, msg: "migrations applied" }));
} else if (command === "topics") {
  await import("./topics.mjs");
} else if (command === "reencrypt-pins") {
  await load("services/fleet/src/reencrypt.ts");
} else if (command === "noop") {
  console.log(JSON.stringify({ level: "info", component: "noop", msg: "done" }));
} else {
  fail(
    `unknown component "${command}": expected gateway, ${SERVICES.join(", ")} migrate [service...], topics, reencrypt-pins or noop`,
  );
}

function fail(message) {
  console.error(message);
  process.exit(2);
}
