import { Migration, outboxInboxSql } from "@transferops/kit";

/** Agents, sessions, the audit log, and the outbox/inbox of the fleet schema. */
export class Migration0001Identity extends Migration {
  override name = "Migration0001Identity";

  up(): void {
    this.addSql(`create table fleet.agents (
      id uuid primary key,
      login varchar(100) not null,
      full_name varchar(200) not null,
      role text not null check (role in ('agent', 'supervisor', 'admin')),
      is_active boolean not null default true,
      must_change_password boolean not null default false,
      password_hash text not null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`);
    this.addSql(`create unique index agents_login_unique on fleet.agents (lower(login))`);
    this.addSql(`create table fleet.sessions (
      id uuid primary key,
      agent_id uuid not null references fleet.agents (id) on delete cascade,
      token_hash char(64) not null unique,
      created_at timestamptz not null default now(),
      expires_at timestamptz not null,
      revoked_at timestamptz
    )`);
    this.addSql(`create index sessions_agent on fleet.sessions (agent_id) where revoked_at is null`);
    this.addSql(`create table fleet.audit_log (
      id bigserial primary key,
      at timestamptz not null default now(),
      actor_agent_id uuid,
      action text not null,
      target_id text,
      details jsonb not null default '{}'
    )`);
    for (const sql of outboxInboxSql("fleet")) this.addSql(sql);
  }
}
