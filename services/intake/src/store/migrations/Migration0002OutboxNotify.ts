import { Migration, outboxNotifySql } from "@transferops/kit";

/** The outbox announces its commits (NOTIFY), so the relay runs when there is something to publish. */
export class Migration0002OutboxNotify extends Migration {
  override name = "Migration0002OutboxNotify";

  up(): void {
    for (const sql of outboxNotifySql("intake")) this.addSql(sql);
  }
}
