import { Migration, outboxNotifySql } from "@transferops/kit";

/** The outbox announces its commits (NOTIFY), so the relay runs when there is something to publish. */
export class Migration0005OutboxNotify extends Migration {
  override name = "Migration0005OutboxNotify";

  up(): void {
    for (const sql of outboxNotifySql("evidence")) this.addSql(sql);
  }
}
