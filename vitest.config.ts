import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

// Files run in parallel: vitest's default is a fork fewer than the cores (one on two cores),
// and these tests mostly wait on PostgreSQL, Kafka and timers (one fork left the two cores
// 60 to 78 % idle). At least two.
const FORKS = Math.max(2, availableParallelism() - 1);

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
    poolOptions: {
      forks: { execArgv: ["--disable-warning=TimeoutNegativeWarning"], maxForks: FORKS, minForks: FORKS },
    },
    reporters: ["default"],
  },
});
