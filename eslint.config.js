// @ts-check
import tseslint from "typescript-eslint";

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
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
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
            },
          ],
        },
      ],
    },
  },
  {
    // The domain holds the rules: pure, no persistence, transport or bus (house style).
    files: ["services/*/src/domain/**/*.ts"],
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
              group: ["../store/*", "../rpc/*", "../events/*"],
              message: "dependencies point one way: rpc/events/store use domain, not the reverse",
            },
            {
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
            },
          ],
        },
      ],
    },
  },
);
