import { Migration } from "@transferops/kit";

/** Counts the passes of an import that failed on an unexpected error, so one that always fails ends. */
export class Migration0002ImportFailures extends Migration {
  override name = "Migration0002ImportFailures";

  up(): void {
    this.addSql(`alter table messaging.imports add column pass_failures integer not null default 0`);
  }
}
