import { inboxPurgeIndex, Migration, type ConcurrentIndex } from "@transferops/kit";

/**
 * The inbox may be pruned (INBOX_RETENTION_H, off by default; kit events.ts `purgeInbox`): by age, found
 * through a BRIN range index on `received_at`, built concurrently (SHARE UPDATE EXCLUSIVE:
 * consumers go on writing while it builds; docs/decisions/history.md, "Outbox and inbox").
 */
export class Migration0004InboxPurge extends Migration {
  override name = "Migration0004InboxPurge";

  static readonly concurrentIndexes: readonly ConcurrentIndex[] = [inboxPurgeIndex("fleet")];

  up(): void {
    // Nothing in the migrator's transaction: the index is built after it (openDatabase).
  }
}
