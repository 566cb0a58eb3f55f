import { describeMigrationDowns } from "../../../../test/support/migration-down-suite.ts";
import { migrations } from "./migrations/index.ts";

// Each migration with a down(): it puts back exactly the schema before it (test/support/migration-down.ts).
describeMigrationDowns("dispatch", migrations, [
  "Migration0011SimCounts",
  "Migration0012UnprovenCounts",
  "Migration0013SearchWindows",
  "Migration0014LookupIndexes",
  "Migration0015UnprovenOrder",
  "Migration0016ScopedQueues",
  "Migration0017ScopedContradicted",
  "Migration0018ContradictedPage",
  "Migration0019DropContradicted",
  "Migration0020SearchPendingList",
]);
