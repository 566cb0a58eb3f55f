import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: [
      "services/*/src/**/*.test.ts",
      "gateway/src/**/*.test.ts",
      "test/**/*.test.ts",
      "gateway/board/e2e/**/*.test.ts",
    ],
    globalSetup: ["test/infra/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 180_000,
    pool: "forks",
    // kafkajs's negative-timeout warning on every broker connection (test/infra/util.ts, QUIET_KAFKAJS).
    poolOptions: { forks: { execArgv: ["--disable-warning=TimeoutNegativeWarning"] } },
    reporters: ["default"],
  },
});
