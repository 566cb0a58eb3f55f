import { Migration } from "@transferops/kit";

/**
 * A message that proves an operation dispatch had failed or rejected is linked to it as
 * `contradiction` (outcome `divergent`): it is not an orphan, and dispatch's alert names it.
 */
export class Migration0007ContradictionLink extends Migration {
  override name = "Migration0007ContradictionLink";

  up(): void {
    this.addSql(`alter table evidence.messages drop constraint messages_link_check`);
    this.addSql(
      `alter table evidence.messages add constraint messages_link_check check (link in ('proof', 'restatement', 'contradiction'))`,
    );
  }
}
