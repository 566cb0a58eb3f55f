import { Migration, outboxNotifySql } from "@transferops/kit";

/** The outbox announces its commits (NOTIFY), so the relay runs when there is something to publish. */
export class Migration0004OutboxNotify extends Migration {
  override name = "Migration0004OutboxNotify";

  up(): void {
    for (const sql of outboxNotifySql("dispatch")) this.addSql(sql);
  }
}
