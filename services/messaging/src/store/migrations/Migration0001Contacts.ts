import { Migration, outboxInboxSql, TRIGRAM_EXTENSION_SQL } from "@transferops/kit";

/**
 * Contacts, the tag catalogue, idempotency keys, saved mappings, imports and their row
 * errors, and the outbox/inbox. `seq` columns give lists an immutable order for cursors.
 * Phone and e-mail are unique among live contacts (partial unique indexes), so two
 * concurrent creates with one phone cannot both succeed.
 */
export class Migration0001Contacts extends Migration {
  override name = "Migration0001Contacts";

  up(): void {
    for (const sql of TRIGRAM_EXTENSION_SQL) this.addSql(sql);
    this.addSql(`create table messaging.contacts (
      customer_id uuid primary key,
      seq bigserial not null unique,
      first_name text,
      last_name text,
      phone text,
      email text,
      language text,
      custom_fields jsonb not null default '{}',
      tag_ids uuid[] not null default '{}',
      lifecycle text,
      collaborators uuid[] not null default '{}',
      blocked boolean not null default false,
      deleted_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      last_transfer_at timestamptz,
      last_operation_id text,
      transfer_count integer not null default 0,
      search_text text generated always as (
        lower(coalesce(first_name, '') || ' ' || coalesce(last_name, '') || ' ' || coalesce(email, ''))
      ) stored
    )`);
    this.addSql(`create unique index contacts_live_phone on messaging.contacts (phone) where deleted_at is null`);
    this.addSql(`create unique index contacts_live_email on messaging.contacts (email) where deleted_at is null`);
    this.addSql(`create index contacts_phone_prefix on messaging.contacts (phone text_pattern_ops)`);
    this.addSql(
      `create index contacts_search_trgm on messaging.contacts using gin (search_text extensions.gin_trgm_ops)`,
    );
    this.addSql(`create index contacts_tags on messaging.contacts using gin (tag_ids)`);
    this.addSql(`create index contacts_updated on messaging.contacts (updated_at)`);
    this.addSql(`create table messaging.tags (
      tag_id uuid primary key,
      name text not null,
      created_at timestamptz not null default now()
    )`);
    this.addSql(`create unique index tags_name on messaging.tags (lower(name))`);
    this.addSql(`create table messaging.idempotency_keys (
      key text primary key,
      request_hash text not null,
      operation text not null,
      response bytea,
      error jsonb,
      created_at timestamptz not null default now()
    )`);
    this.addSql(`create index idempotency_keys_created on messaging.idempotency_keys (created_at)`);
    this.addSql(`create table messaging.mappings (
      mapping_id uuid primary key,
      seq bigserial not null unique,
      name text not null,
      columns jsonb not null,
      deleted_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`);
    this.addSql(`create table messaging.imports (
      import_id uuid primary key,
      seq bigserial not null unique,
      state text not null,
      file_name text,
      content bytea not null,
      charset_requested text not null,
      delimiter_requested text not null,
      charset text,
      delimiter text,
      mapping_id uuid,
      template text,
      columns jsonb not null,
      duplicate_policy text not null,
      rows_total integer not null default 0,
      processed integer not null default 0,
      created integer not null default 0,
      updated integer not null default 0,
      skipped integer not null default 0,
      failed integer not null default 0,
      failure_reason text,
      failure_detail text,
      lease_until timestamptz,
      created_at timestamptz not null default now(),
      started_at timestamptz,
      finished_at timestamptz
    )`);
    this.addSql(`create index imports_pending on messaging.imports (seq) where state in ('queued', 'running')`);
    this.addSql(`create table messaging.import_errors (
      import_id uuid not null references messaging.imports (import_id),
      seq bigserial not null,
      line integer not null,
      "column" text not null,
      reason text not null,
      detail text not null,
      primary key (import_id, seq)
    )`);
    for (const sql of outboxInboxSql("messaging")) this.addSql(sql);
  }
}
