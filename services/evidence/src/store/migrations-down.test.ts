import { describeMigrationDowns } from "../../../../test/support/migration-down-suite.ts";
import { migrations } from "./migrations/index.ts";

// Each migration with a down(): it puts back exactly the schema before it (test/support/migration-down.ts).
describeMigrationDowns("evidence", migrations, [
  "Migration0010Autovacuum",
  "Migration0011DayChains",
  "Migration0012ChainBalances",
  "Migration0013UnkeptDays",
  "Migration0014PreviousDayCount",
  "Migration0015ScopedQueues",
  "Migration0016TodayRuns",
]);
