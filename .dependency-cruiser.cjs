// The import rules CI holds (`npm run lint:imports`, dependency-cruiser). What each folder of a
// service may import is the README's "Layout": rpc/ → flows/ → events/, store/, domain/; events/
// reads only flows' leaves; store/ and domain/ point nowhere up.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "An import circle: a module that depends on itself through others. Move the shared part down.",
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: ["type-only"] } },
    },
    {
      name: "no-circular-types",
      severity: "error",
      comment: "An import circle of types alone is still a circle in the design: move the type down.",
      from: {},
      to: { circular: true },
    },
    {
      name: "production-not-to-tests-or-tools",
      severity: "error",
      comment:
        "Production code (services, gateway, board) never imports the tests, the benchmarks or the local launcher.",
      from: { path: "^(services|gateway)/", pathNot: ["\\.test\\.ts$", "^gateway/board/e2e/"] },
      to: { path: "^(test|deploy)/" },
    },
    {
      name: "board-e2e-through-test-support",
      severity: "error",
      comment: "The board's end-to-end scripts start the system through test/support, as every test does.",
      from: { path: "^gateway/board/e2e/" },
      to: { path: "^deploy/" },
    },
    {
      name: "store-not-up",
      severity: "error",
      comment: "store/ holds SQL: it never imports the flows, events, jobs or handlers above it.",
      from: { path: "^services/[^/]+/src/store/" },
      to: { path: "^services/[^/]+/src/(flows|events|jobs|rpc)/" },
    },
    {
      name: "rpc-not-to-store",
      severity: "error",
      comment:
        "rpc/ parses the request, calls a flow and maps the answer: every transaction, query and call to another service is in flows/.",
      from: { path: "^services/[^/]+/src/rpc/" },
      to: { path: "^services/[^/]+/src/store/" },
    },
    {
      name: "events-not-to-flows",
      severity: "error",
      comment:
        "flows/ publish through events/ in their transaction, so events/ never imports a use case of flows/ (an arrow back closes a circle between the folders); it may read the layer's leaves, mappers.ts and ports.ts. A consumer that runs a use case lives in flows/.",
      from: { path: "^services/[^/]+/src/events/" },
      to: { path: "^services/[^/]+/src/flows/", pathNot: "^services/[^/]+/src/flows/(mappers|ports)\\.ts$" },
    },
    {
      name: "flows-leaves-stay-leaves",
      severity: "error",
      comment:
        "flows/mappers.ts and flows/ports.ts, which events/ may import, import neither events/ nor the use cases of flows/: no circle between events/ and flows/ can pass through them.",
      from: { path: "^services/[^/]+/src/flows/(mappers|ports)\\.ts$" },
      to: {
        path: "^services/[^/]+/src/(events|flows)/",
        pathNot: "^services/[^/]+/src/flows/(mappers|ports)\\.ts$",
      },
    },
    {
      name: "domain-pure",
      severity: "error",
      comment: "domain/ is pure: it never imports the store, flows, events, jobs or handlers.",
      from: { path: "^services/[^/]+/src/domain/" },
      to: { path: "^services/[^/]+/src/(store|flows|events|jobs|rpc)/" },
    },
    {
      name: "domain-kit-pure-entry",
      severity: "error",
      comment:
        "domain/ imports the kit only through its pure entry (@transferops/kit/pure: errors, vocabulary, values, msisdn, time), never the main entry that loads MikroORM, pg and kafkajs.",
      from: {
        path: "^services/[^/]+/src/domain/",
        pathNot: ["\\.test\\.ts$"],
      },
      to: {
        path: "^services/kit/src/",
        pathNot:
          "^services/kit/src/(pure|errors|guards|vocabulary|values|msisdn|time|local-day)\\.ts$|^services/kit/src/gen/",
      },
    },
    {
      name: "kit-pure-entry-stays-pure",
      severity: "error",
      comment:
        "The kit's pure entry and what it exports load no database, ORM, bus or server: only each other, the generated messages and protobuf/connect.",
      from: { path: "^services/kit/src/(pure|errors|guards|vocabulary|values|msisdn|time|local-day)\\.ts$" },
      to: {
        pathNot: [
          "^services/kit/src/(pure|errors|guards|vocabulary|values|msisdn|time|local-day)\\.ts$",
          "^services/kit/src/gen/",
          "@bufbuild/protobuf",
          "@connectrpc/connect/",
          "^node:",
        ],
      },
    },
  ],
  options: {
    doNotFollow: { path: ["node_modules", "services/kit/src/gen"] },
    exclude: { path: ["node_modules", "\\.cache", "dist"] },
    tsPreCompilationDeps: true,
    combinedDependencies: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "require", "node", "default"] },
  },
};
