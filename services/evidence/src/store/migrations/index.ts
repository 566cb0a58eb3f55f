import { Migration0001Evidence } from "./Migration0001Evidence.ts";
import { Migration0002UnknownSender } from "./Migration0002UnknownSender.ts";
import { Migration0003Commission } from "./Migration0003Commission.ts";
import { Migration0004WordingRules } from "./Migration0004WordingRules.ts";
import { Migration0005OutboxNotify } from "./Migration0005OutboxNotify.ts";
import { Migration0006TaughtReadings } from "./Migration0006TaughtReadings.ts";
import { Migration0007ContradictionLink } from "./Migration0007ContradictionLink.ts";
import { Migration0008HistoryIndexes } from "./Migration0008HistoryIndexes.ts";
import { Migration0009InboxPurge } from "./Migration0009InboxPurge.ts";
import { Migration0010Autovacuum } from "./Migration0010Autovacuum.ts";
import { Migration0011DayChains } from "./Migration0011DayChains.ts";
import { Migration0012ChainBalances } from "./Migration0012ChainBalances.ts";
import { Migration0013UnkeptDays } from "./Migration0013UnkeptDays.ts";
import { Migration0014PreviousDayCount } from "./Migration0014PreviousDayCount.ts";
import { Migration0015ScopedQueues } from "./Migration0015ScopedQueues.ts";
import { Migration0016TodayRuns } from "./Migration0016TodayRuns.ts";

/** Every migration of the evidence schema, in order. */
export const migrations = [
  Migration0001Evidence,
  Migration0002UnknownSender,
  Migration0003Commission,
  Migration0004WordingRules,
  Migration0005OutboxNotify,
  Migration0006TaughtReadings,
  Migration0007ContradictionLink,
  Migration0008HistoryIndexes,
  Migration0009InboxPurge,
  Migration0010Autovacuum,
  Migration0011DayChains,
  Migration0012ChainBalances,
  Migration0013UnkeptDays,
  Migration0014PreviousDayCount,
  Migration0015ScopedQueues,
  Migration0016TodayRuns,
];
