import { Migration0001Operations } from "./Migration0001Operations.ts";
import { Migration0002DeviceStatus } from "./Migration0002DeviceStatus.ts";
import { Migration0003QueueOrder } from "./Migration0003QueueOrder.ts";
import { Migration0004OutboxNotify } from "./Migration0004OutboxNotify.ts";
import { Migration0005FinishedIndexes } from "./Migration0005FinishedIndexes.ts";
import { Migration0006SimHoldingIndex } from "./Migration0006SimHoldingIndex.ts";
import { Migration0007HeldDebits } from "./Migration0007HeldDebits.ts";
import { Migration0008SimCreatedIndex } from "./Migration0008SimCreatedIndex.ts";
import { Migration0009InboxPurge } from "./Migration0009InboxPurge.ts";
import { Migration0010SearchIndex } from "./Migration0010SearchIndex.ts";
import { Migration0011SimCounts } from "./Migration0011SimCounts.ts";
import { Migration0012UnprovenCounts } from "./Migration0012UnprovenCounts.ts";
import { Migration0013SearchWindows } from "./Migration0013SearchWindows.ts";
import { Migration0014LookupIndexes } from "./Migration0014LookupIndexes.ts";
import { Migration0015UnprovenOrder } from "./Migration0015UnprovenOrder.ts";
import { Migration0016ScopedQueues } from "./Migration0016ScopedQueues.ts";
import { Migration0017ScopedContradicted } from "./Migration0017ScopedContradicted.ts";
import { Migration0018ContradictedPage } from "./Migration0018ContradictedPage.ts";
import { Migration0019DropContradicted } from "./Migration0019DropContradicted.ts";
import { Migration0020SearchPendingList } from "./Migration0020SearchPendingList.ts";

/** Every migration of the dispatch schema, in order. */
export const migrations = [
  Migration0001Operations,
  Migration0002DeviceStatus,
  Migration0003QueueOrder,
  Migration0004OutboxNotify,
  Migration0005FinishedIndexes,
  Migration0006SimHoldingIndex,
  Migration0007HeldDebits,
  Migration0008SimCreatedIndex,
  Migration0009InboxPurge,
  Migration0010SearchIndex,
  Migration0011SimCounts,
  Migration0012UnprovenCounts,
  Migration0013SearchWindows,
  Migration0014LookupIndexes,
  Migration0015UnprovenOrder,
  Migration0016ScopedQueues,
  Migration0017ScopedContradicted,
  Migration0018ContradictedPage,
  Migration0019DropContradicted,
  Migration0020SearchPendingList,
];
