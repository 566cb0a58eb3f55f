import { Migration } from "@transferops/kit";

/**
 * Messages from a sender that is not one of the operator's sender ids are stored with the
 * outcome `unknown_sender` (alert raised, never matched).
 */
export class Migration0002UnknownSender extends Migration {
  override name = "Migration0002UnknownSender";

  up(): void {
    this.addSql(`alter table evidence.messages drop constraint messages_outcome_check`);
    this.addSql(`alter table evidence.messages add constraint messages_outcome_check check (outcome in ('pending',
      'confirmed', 'restated', 'ambiguous', 'divergent', 'orphan', 'movement', 'stored', 'not_correlated', 'attached',
      'unknown_sender'))`);
  }
}
