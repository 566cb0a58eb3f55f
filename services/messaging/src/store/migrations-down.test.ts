import { describeMigrationDowns } from "../../../../test/support/migration-down-suite.ts";
import { migrations } from "./migrations/index.ts";

// Each migration with a down(): it puts back exactly the schema before it (test/support/migration-down.ts).
describeMigrationDowns("messaging", migrations, ["Migration0005Autovacuum", "Migration0006SearchPendingList"]);
