import { Migration } from "@transferops/kit";

/**
 * Wording rules taught at run time (docs/decisions/evidence.md, "Wording rules taught at
 * run time"). One row per version; a version's wording is never updated (an edit adds a version),
 * only its state moves draft -> active -> retired, each step with who and when. At most one
 * active version per rule. The re-reading after activation keeps its cursor on the row, so a
 * crash resumes where it stopped.
 */
export class Migration0004WordingRules extends Migration {
  override name = "Migration0004WordingRules";

  up(): void {
    this.addSql(`create table evidence.wording_rules (
      id uuid primary key,
      rule_id uuid not null,
      version int not null check (version >= 1),
      operator text not null check (operator in ('operator_a', 'operator_b')),
      kind text,
      language text not null check (language in ('fr', 'en')),
      direction text check (direction in ('in', 'out')),
      template text not null,
      state text not null default 'draft' check (state in ('draft', 'active', 'retired')),
      created_at timestamptz not null default now(),
      created_by uuid not null,
      activated_at timestamptz,
      activated_by uuid,
      retired_at timestamptz,
      retired_by uuid,
      reread_state text not null default 'none' check (reread_state in ('none', 'running', 'done')),
      reread_after_at timestamptz,
      reread_after_id uuid,
      reread_messages bigint not null default 0,
      reread_confirmed bigint not null default 0,
      unique (rule_id, version),
      check ((state = 'draft') = (activated_at is null) or state = 'retired'),
      check ((state = 'retired') = (retired_at is not null))
    )`);
    this.addSql(
      `create unique index wording_rules_one_active on evidence.wording_rules (rule_id) where state = 'active'`,
    );
    this.addSql(`create index wording_rules_active on evidence.wording_rules (operator) where state = 'active'`);
    // A version's wording never changes once stored.
    this.addSql(`create function evidence.wording_rules_immutable() returns trigger language plpgsql as $$
      begin
        if (new.rule_id, new.version, new.operator, new.kind, new.language, new.direction, new.template)
           is distinct from (old.rule_id, old.version, old.operator, old.kind, old.language, old.direction, old.template)
        then raise exception 'a wording rule version is immutable: add a new version';
        end if;
        return new;
      end $$`);
    this.addSql(`create trigger wording_rules_immutable before update on evidence.wording_rules
      for each row execute function evidence.wording_rules_immutable()`);
    // The re-reading scans unmatched messages in storage order.
    this.addSql(
      `create index messages_rereadable on evidence.messages (stored_at, id)
         where outcome in ('orphan', 'stored', 'not_correlated') and operation_id is null and dismissed_at is null`,
    );
  }
}
