// The fast tier (`npm run test:unit`): the pure rules of every service, in seconds, with no
// PostgreSQL, no Kafka and no global setup. A `domain/` folder imports nothing that does I/O
// (the linter holds that), so every test under one belongs here; `npm test` still runs them too.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["services/*/src/domain/**/*.test.ts", "test/simulator/**/*.test.ts", "test/sim/**/*.test.ts"],
    testTimeout: 20_000,
    reporters: ["default"],
  },
});
