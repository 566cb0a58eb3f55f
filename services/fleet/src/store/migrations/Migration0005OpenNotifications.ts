import { Migration, type ConcurrentIndex } from "@transferops/kit";

/**
 * The fleet's health counts the notifications nobody acknowledged (store/notifications.ts,
 * `countOpenNotifications`): with no index on `acknowledged_at` the count read every
 * notification ever raised. `notifications_open` holds the open ones alone, so the count reads
 * as many entries as there are open notifications (npm run bench:history;
 * docs/decisions/history.md). Built concurrently (SHARE UPDATE EXCLUSIVE); an acknowledgement
 * removes nothing from it until vacuum, a new notification adds one entry.
 */
export class Migration0005OpenNotifications extends Migration {
  override name = "Migration0005OpenNotifications";

  static readonly concurrentIndexes: readonly ConcurrentIndex[] = [
    { name: "notifications_open", on: `fleet.notifications (raised_at) where acknowledged_at is null` },
  ];

  up(): void {
    // Nothing in the migrator's transaction: the index is built after it (openDatabase).
  }
}
