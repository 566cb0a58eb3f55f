// @ts-check
import tseslint from "typescript-eslint";

/** The other services' packages: a service talks to another over gRPC or Kafka. */
const OTHER_SERVICES = {
  group: [
    "@transferops/fleet*",
    "@transferops/dispatch*",
    "@transferops/evidence*",
    "@transferops/intake*",
    "@transferops/analytics*",
    "@transferops/messaging*",
    "@transferops/gateway*",
  ],
  message: "a service talks to another over gRPC or Kafka, never by importing its code",
};
const NO_RPC = {
  group: ["**/rpc/*"],
  message: "rpc/ is the top layer: flows/, events/, jobs/ and store/ never import it",
};
const NO_EVENTS = { group: ["**/events/*"], message: "store/ writes rows; events/ publishes, store/ never imports it" };
/** 70 lines of code a function, blank lines and comments not counted. */
const MAX_FUNCTION_LINES = { max: 70, skipBlankLines: true, skipComments: true };
/** How deep domain/ folders go (evidence's domain/parsers/testdata/ is the deepest). */
const domainDepths = [0, 1, 2, 3];

export default tseslint.config(
  {
    ignores: [
      "**/node_modules/**",
      "services/kit/src/gen/**",
      "deploy/helm/**",
      "**/.cache/**",
      "gateway/board/dist/**",
    ],
  },
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-explicit-any": "off",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/no-non-null-assertion": "off",
    },
  },
  {
    // No service imports another service's code; shared code lives in the kit.
    files: ["services/*/src/**/*.ts"],
    rules: { "no-restricted-imports": ["error", { patterns: [OTHER_SERVICES] }] },
  },
  {
    // The arrows between layers: rpc/ (the handlers) is the top; nothing below imports it
    // (flows/ holds what handlers, consumers and jobs share: use cases, ports, mappers),
    // and the store writes rows, never publishes (events/ does, in the caller's transaction).
    files: ["services/*/src/flows/**/*.ts", "services/*/src/events/**/*.ts", "services/*/src/jobs/**/*.ts"],
    rules: { "no-restricted-imports": ["error", { patterns: [OTHER_SERVICES, NO_RPC] }] },
  },
  {
    files: ["services/*/src/store/**/*.ts"],
    rules: { "no-restricted-imports": ["error", { patterns: [OTHER_SERVICES, NO_RPC, NO_EVENTS] }] },
  },
  {
    // Functions that fit on a screen (house style), the board's components and hooks too. Rule
    // tables (*.rules.ts), migrations and the board's text catalogue (catalogue/*.ts) are data
    // and exempt by name; tests (and the board's e2e/) are not held.
    files: ["services/**/*.ts", "gateway/src/**/*.ts", "gateway/board/src/**/*.ts", "gateway/board/src/**/*.tsx"],
    ignores: ["**/*.test.ts", "**/*.rules.ts", "**/store/migrations/*.ts", "gateway/board/src/catalogue/*.ts"],
    rules: { "max-lines-per-function": ["error", MAX_FUNCTION_LINES] },
  },
  ...domainDepths.map((depth) => ({
    // The domain holds the rules: pure, no persistence, transport or bus, and nothing of ours
    // but other domain modules and the kit (house style): only the kit's pure entry,
    // `@transferops/kit/pure` (errors, vocabulary, values, msisdn, time), which
    // .dependency-cruiser.cjs holds (domain-kit-pure-entry).
    files: [`services/*/src/domain/${"*/".repeat(depth)}*.ts`],
    ignores: ["**/*.test.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: ["@mikro-orm/*", "@connectrpc/*", "kafkajs", "pg", "express"],
              message: "domain/ is pure: no ORM, transport or bus",
            },
            {
              // A file `depth` folders below domain/ leaves it with depth + 1 `../`.
              group: [`${"../".repeat(depth + 1)}*`],
              message:
                "domain/ imports nothing of ours outside domain/: rpc/events/store/jobs use domain, not the reverse",
            },
            { group: ["@transferops/*", "!@transferops/kit"], message: "domain/ imports only the kit of ours" },
          ],
        },
      ],
    },
  })),
);
