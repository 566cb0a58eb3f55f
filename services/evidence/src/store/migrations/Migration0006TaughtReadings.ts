import { Migration } from "@transferops/kit";

/**
 * What a taught wording rule's version read, found by its parser rule id: a retired version's
 * messages are read again by the remaining rules (flows/reread.ts). Only taught readings are
 * indexed (a handful of the messages).
 */
export class Migration0006TaughtReadings extends Migration {
  override name = "Migration0006TaughtReadings";

  up(): void {
    this.addSql(
      `create index messages_taught_reading on evidence.messages (parse_rule, stored_at, id) where parse_rule like 'taught.%'`,
    );
  }
}
