// The history of the history benchmark (test/bench/history.ts): months of a fleet's work
// written straight into each service's tables with set-based SQL (no API: a million
// operations through the API would take hours), in the proportions production leaves them.
//
// - dispatch: operations over `days` days, ending before the benchmark's SIMs were measured
//   (so that none of them counts against a SIM's free balance), every one finished: 88 %
//   confirmed (96 % of those by their SMS, the rest attached, settled or arbitrated), 6 %
//   failed, 4 % rejected, 1 % balance checks, the rest left `no_evidence` (the arbitration
//   queue's backlog), a few contradicted; the proofs of the proven ones, and an ambiguous one
//   (a text naming two operations) for every arbitrated operation and one unproven in four;
//   each SIM's counts.
// - evidence: one message per proven operation, linked, then as many more as `messages`
//   asks: orphan deposits (a fifth, a tenth of them dismissed), movements (three fifths),
//   balance replies (dismissed as balance readings); the daily
//   reconciliation of every SIM's day, computed from them.
// - fleet: agents, handsets and SIMs of the history, audit rows (one per ten operations),
//   notifications (one per fifty).
// - intake: a transaction per twenty operations; messaging: one contact per ten operations
//   (the customers the operations went to); analytics: the read model of it all, rollups
//   rebuilt as its migration does.
// - outbox: the published events of the last seven days (OUTBOX_RETENTION_H prunes older
//   ones); inbox: every event every consumer ever applied (nothing prunes an inbox).
//
// The operations and messages go in by chunks, each its own statement, so that progress is
// printed and no statement holds a million rows in memory. The bulk tables' indexes are dropped
// for the load and built again after it (history-load.ts says why and why it is safe), and two
// connections write what does not depend on each other at the same time (`buildHistory`).
import pg from "pg";
import {
  BULK_TABLES,
  dropBulkIndexes,
  IndexRebuild,
  indexCatalogue,
  sameIndexes,
  serverWrites,
  writtenSince,
} from "./history-load.ts";

export interface HistorySize {
  operations: number;
  messages: number;
  days: number;
  /** The history ends here: before the benchmark's SIMs were measured. */
  end: Date;
  /** The benchmark's own SIMs and agent, given a share of the history like any other. */
  sims: { simId: string; deviceId: string; msisdn: string }[];
  agentId: string;
}

const HISTORY_SIMS = 96;
const HISTORY_AGENTS = 50;
const CHUNK = 250_000;
const NAMES = `(array['AMINA NGONO','JEAN MBARGA','MARIE FOTSO','PAUL TCHOUA','ESTELLE ABENA','IBRAHIM KAMGA','CLARISSE BELLO','SERGE NDONGO'])`;

/** An outbox row's payload and headers: about the size of a real event's. */
const PAYLOAD = `decode(repeat(md5(g::text), 5), 'hex')`;
const HEADERS = `'{"correlation_id": "00000000-0000-4000-8000-000000000000", "type": "history"}'::jsonb`;

/**
 * The fleet the history ran on, written before the empty database is measured (a fleet's
 * size is not history: both phases see the same SIMs and agents): the benchmark's SIMs and
 * agent, and as many more as a fleet of 100 SIMs has, each measured at `end` as its last
 * proof left it (a SIM of a working fleet is measured with every proof).
 */
export async function buildFleet(db: pg.Client, size: Pick<HistorySize, "end" | "sims" | "agentId">): Promise<number> {
  const t = performance.now();
  const end = size.end.toISOString();
  await db.query(
    `insert into fleet.agents (id, login, full_name, role, password_hash, created_at)
     select md5('agent' || g)::uuid, 'history-' || g, 'History Agent ' || g, 'agent', 'x', $1::timestamptz - interval '400 days'
     from generate_series(1, ${HISTORY_AGENTS}) g`,
    [end],
  );
  await db.query(
    `insert into fleet.devices (id, label, created_at)
     select md5('device' || g), 'History handset ' || g, $1::timestamptz - interval '400 days'
     from generate_series(1, ${HISTORY_SIMS}) g`,
    [end],
  );
  await db.query(
    `insert into fleet.sims (id, operator, msisdn, device_id, subscription_slot, pin_key_id, pin_ciphertext,
       balance_mirror, balance_updated_at, balance_source, created_at)
     select md5('sim' || g)::uuid, case when g % 2 = 0 then 'operator_a' else 'operator_b' end,
       case when g % 2 = 0 then '67' else '69' end || lpad((9000000 + g)::text, 7, '0'),
       md5('device' || g), 0, 'history', '\\x00', 1000000, $1::timestamptz, 'sms', $1::timestamptz - interval '400 days'
     from generate_series(1, ${HISTORY_SIMS}) g`,
    [end],
  );
  await db.query(
    `create table public.history_sims (idx int primary key, sim_id text, device_id text, operator text, msisdn text)`,
  );
  await db.query(`create table public.history_agents (idx int primary key, agent_id uuid)`);
  await db.query(
    `insert into public.history_sims
     select g - 1, md5('sim' || g)::uuid::text, md5('device' || g), case when g % 2 = 0 then 'operator_a' else 'operator_b' end,
       case when g % 2 = 0 then '67' else '69' end || lpad((9000000 + g)::text, 7, '0')
     from generate_series(1, ${HISTORY_SIMS}) g`,
  );
  await db.query(
    `insert into public.history_sims select ${HISTORY_SIMS} + s.i - 1, s.sim_id, s.device_id, 'operator_b', s.msisdn
     from jsonb_to_recordset($1::jsonb) as s(i int, sim_id text, device_id text, msisdn text)`,
    [JSON.stringify(size.sims.map((s, i) => ({ i: i + 1, sim_id: s.simId, device_id: s.deviceId, msisdn: s.msisdn })))],
  );
  await db.query(
    `insert into public.history_agents select g - 1, md5('agent' || g)::uuid from generate_series(1, ${HISTORY_AGENTS}) g
     union all select ${HISTORY_AGENTS}, $1::uuid`,
    [size.agentId],
  );
  return performance.now() - t;
}
/** One step of the build: its statements' time and rows, summed. */
export interface Step {
  step: string;
  ms: number;
  rows: number;
}

/** What every part of the build shares: the size, the two connections' step log, the progress log. */
interface Build {
  size: HistorySize;
  end: string;
  spanS: number;
  sims: number;
  agents: number;
  customers: number;
  steps: Step[];
  log: (s: string) => void;
  /** A bulk table is loaded: its indexes can be built. */
  loaded: (table: string) => void;
}

async function step(b: Build, db: pg.Client, name: string, sql: string, params: unknown[] = []): Promise<void> {
  const t = performance.now();
  const r = await db.query(sql, params);
  const ms = performance.now() - t;
  const last = b.steps.find((s) => s.step === name);
  if (last) {
    last.ms += ms;
    last.rows += r.rowCount ?? 0;
  } else b.steps.push({ step: name, ms, rows: r.rowCount ?? 0 });
}

/** A chunk of operations, `$1` to `$6` of `$2`, in time order. */
const OPERATIONS_SQL = (sims: number, agents: number) =>
  `insert into dispatch.operations (operation_id, request_id, status, origin, op_type, agent_id, operator, montant,
         msisdn_dest, dest_name, sim_id, device_id, device_label, subscription_slot, ussd_string, ussd_response,
         device_outcome, executed_at, reject_reason, failure_reason, evidence_expires_at, evidence_message_id,
         evidence_operator_ref, evidence_amount, evidence_fee, evidence_balance_after, evidence_raw_text,
         evidence_received_at, evidence_kind, evidence_is_ambiguous, confirmed_by, decision, decision_note, decided_by,
         decided_by_name, decided_at, contradicting_message_id, created_at, started_at, finished_at, updated_at)
       select gen_random_uuid(), 'history-' || x.g, x.status, x.origin, x.op_type, a.agent_id, s.operator, x.montant,
         x.dest, ${NAMES}[1 + x.g % 8], s.sim_id, s.device_id, 'Handset', 0, '#150*1*1#',
         case when x.dialled then 'Transaction en cours' end,
         case when x.status = 'failed' then 'ussd_failed' when x.dialled then 'ussd_ok' end,
         case when x.dialled then x.t + interval '20 seconds' end,
         case when x.status = 'rejected' then 'sim_unavailable' end,
         case when x.status = 'failed' then 'ussd_failed' end,
         x.t + interval '5 minutes',
         case when x.proven then gen_random_uuid()::text end,
         case when x.proven then 'CI' || x.g end, case when x.proven then x.montant end,
         case when x.proven then 0 end, case when x.proven then 1000000 + x.g % 5000000 end,
         case when x.proven then 'Depot reussi' end, case when x.proven then x.t + interval '40 seconds' end,
         case when x.proven then 'DEP' end, case when x.proven then false end,
         x.confirmed_by, case when x.confirmed_by in ('settle', 'arbitrate') then 'arrived' end,
         case when x.confirmed_by in ('settle', 'arbitrate') then 'settled by hand' end,
         case when x.confirmed_by in ('settle', 'arbitrate') then a.agent_id end,
         case when x.confirmed_by in ('settle', 'arbitrate') then 'History Agent' end,
         case when x.confirmed_by in ('settle', 'arbitrate') then x.t + interval '1 hour' end,
         case when x.contradicted then gen_random_uuid()::text end,
         x.t, case when x.dialled then x.t + interval '5 seconds' end, x.t + interval '45 seconds',
         x.t + case when x.confirmed_by in ('settle', 'arbitrate') then interval '1 hour' else interval '45 seconds' end
       from (select g, t, status, origin, op_type, dest,
               case when op_type = 'balance' then 1 else (1 + floor(r2 * 400)) * 250 end as montant,
               status <> 'rejected' as dialled,
               status = 'confirmed' and confirmed_by = 'proof' as proven,
               status = 'failed' and r2 < 0.01 as contradicted,
               confirmed_by
             from (select g, r2, t, dest, origin,
                     case when g % 100 = 0 then 'balance' else 'deposit' end as op_type,
                     case when r < 0.88 or g % 100 = 0 then 'confirmed' when r < 0.94 then 'failed'
                          when r < 0.98 then 'rejected' else 'no_evidence' end as status,
                     case when r < 0.88 or g % 100 = 0 then
                       case when r2 < 0.96 or g % 100 = 0 then 'proof' when r2 < 0.98 then 'attach'
                            when r2 < 0.995 then 'settle' else 'arbitrate' end end as confirmed_by
                   from (select g, random() as r, random() as r2,
                           $3::timestamptz - ($4::double precision * (1 - g::double precision / $2)) * interval '1 second' as t,
                           case when random() < 0.7 then 'aggregated' else 'assisted' end as origin,
                           '6' || lpad(((g::bigint * 7919) % $5 + 70000000)::text, 8, '0') as dest
                         from generate_series($1::int, $6::int) g) q) q2) x
       join public.history_sims s on s.idx = x.g % ${sims}
       join public.history_agents a on a.idx = (x.g / 7) % ${agents}`;

/**
 * Operations, in time order (as they were inserted), each on a SIM and by an agent; their SIMs'
 * counts (Migration0011SimCounts) recounted once after, not row by row by the triggers; the
 * proofs of the proven ones, and the ambiguous ones.
 */
async function loadOperations(b: Build, db: pg.Client): Promise<void> {
  const { size } = b;
  await db.query(`set session_replication_role = replica`);
  for (let start = 1; start <= size.operations; start += CHUNK) {
    const stop = Math.min(size.operations, start + CHUNK - 1);
    const t = performance.now();
    await step(b, db, "dispatch: operations", OPERATIONS_SQL(b.sims, b.agents), [
      start,
      size.operations,
      b.end,
      b.spanS,
      b.customers,
      stop,
    ]);
    b.log(
      `  history: ${stop.toLocaleString("en")} operations (${((performance.now() - t) / 1000).toFixed(1)} s this chunk)`,
    );
  }
  await db.query(`set session_replication_role = origin`);
  b.loaded("dispatch.operations");
  await step(
    b,
    db,
    "dispatch: SIMs' counts",
    `insert into dispatch.sim_operation_counts as c (sim_id, operations, confirmed, failed, no_evidence, unproven, counted)
     select sim_id, count(*), count(*) filter (where status = 'confirmed'), count(*) filter (where status = 'failed'),
       count(*) filter (where status = 'no_evidence'),
       count(*) filter (where status = 'no_evidence' and op_type not in ('balance', 'mini_statement')), true
     from dispatch.operations where sim_id is not null group by sim_id
     on conflict (sim_id) do update set operations = excluded.operations, confirmed = excluded.confirmed,
       failed = excluded.failed, no_evidence = excluded.no_evidence, unproven = excluded.unproven, counted = true`,
  );
  await step(
    b,
    db,
    "dispatch: proofs",
    `insert into dispatch.proofs (message_id, sim_id, outcome, operation_id, created_at)
     select evidence_message_id, sim_id, 'confirmed', operation_id, evidence_received_at
     from dispatch.operations where evidence_message_id is not null and request_id like 'history-%'`,
  );
  // A text that named two operations of its SIM (the arbitration queue's evidence_count): for
  // every arbitrated operation and one unproven in four, naming it and the one before it among
  // those of its SIM. The message itself is not written (the queue reads the proofs alone).
  await step(
    b,
    db,
    "dispatch: ambiguous proofs",
    `insert into dispatch.proofs (message_id, sim_id, outcome, candidate_operation_ids, created_at)
     select 'history-ambiguous-' || operation_id, sim_id, 'ambiguous',
       jsonb_build_array(operation_id::text) || coalesce(jsonb_build_array(before::text), '[]'), created_at + interval '40 seconds'
     from (select operation_id, sim_id, created_at, lag(operation_id) over (partition by sim_id order by created_at) as before
           from dispatch.operations
           where request_id like 'history-%' and (confirmed_by = 'arbitrate' or (status = 'no_evidence' and random() < 0.25))) x`,
  );
  b.loaded("dispatch.proofs");
}

/** Messages: the proof of each proven operation, then orphans, movements and balance replies. */
async function loadMessages(b: Build, db: pg.Client): Promise<void> {
  // Without the trigger that counts a day's chain changes (Migration0011DayChains): the days'
  // rows are written once the indexes are built again (buildHistory, "days' chain counts").
  await db.query(`set session_replication_role = replica`);
  // Written first to an unlogged copy without balances that chain, then chained SIM by SIM into
  // a second (chainedMessages): each message's balance after is the one before moved by it, as
  // an operator prints them, so a day's chain has no break; then moved over in time order.
  await db.query(`create unlogged table public.history_messages (like evidence.messages including defaults)`);
  await step(
    b,
    db,
    "evidence: linked messages",
    `insert into public.history_messages (id, sim_id, sms_hash, sender, raw_text, received_at, device_received_at,
       client_message_id, subscription_slot, kind, amount, fee, balance_after, operator_ref, counterparty_msisdn,
       direction, language, parse_rule, state, outcome, operation_id, link, linked_at, linked_by, balance_state,
       balance, previous_balance, stored_at, correlated_at)
     select o.evidence_message_id::uuid, o.sim_id, encode(sha256(o.evidence_message_id::bytea), 'hex'), 'OrangeMoney',
       'Depot vers ' || o.msisdn_dest || ' reussi. Montant transaction : ' || o.montant || 'FCFA, ID de Transaction : '
         || o.evidence_operator_ref || ', Nouveau Solde : ' || o.evidence_balance_after || 'FCFA.',
       o.evidence_received_at, o.evidence_received_at, left(o.evidence_message_id, 36), 0, 'DEP', o.montant, 0,
       o.evidence_balance_after, o.evidence_operator_ref, o.msisdn_dest, 'out', 'fr', 'operator_b.deposit', 'done',
       'confirmed', o.operation_id, 'proof', o.evidence_received_at, 'proof', 'done', o.evidence_balance_after,
       o.evidence_balance_after + o.montant, o.evidence_received_at, o.evidence_received_at
     from dispatch.operations o where o.evidence_message_id is not null and o.request_id like 'history-%'`,
  );
  const linked = Number((await db.query(`select count(*) as n from public.history_messages`)).rows[0].n);
  const unlinked = Math.max(0, b.size.messages - linked);
  for (let start = 1; start <= unlinked; start += CHUNK) {
    const stop = Math.min(unlinked, start + CHUNK - 1);
    await step(b, db, "evidence: orphans, movements, balance replies", UNLINKED_SQL(b.sims), [
      start,
      unlinked,
      b.end,
      b.spanS,
      stop,
    ]);
    b.log(`  history: ${(linked + stop).toLocaleString("en")} messages`);
  }
  const columns = (
    await db.query<{ column_name: string }>(
      `select column_name from information_schema.columns where table_schema = 'evidence' and table_name = 'messages'
       order by ordinal_position`,
    )
  ).rows.map((r) => r.column_name);
  await db.query(`create unlogged table public.history_chained (like evidence.messages including defaults)`);
  for (let first = 0; first < b.sims; first += SIMS_A_STEP) {
    await step(b, db, "evidence: messages with their balances chained", chainedMessages(columns), [
      first,
      first + SIMS_A_STEP - 1,
    ]);
    b.log(`  history: balances chained for ${Math.min(b.sims, first + SIMS_A_STEP)} of ${b.sims} SIMs`);
  }
  await db.query(`drop table public.history_messages`);
  // Moved in the order they arrive, as production writes them: a page holds the messages of a
  // moment, of every SIM, and a SIM's day is spread over the day's pages. Moved SIM by SIM, a
  // page held one SIM's messages (a day's messages of a SIM on 67 pages, where production
  // spreads them over a thousand), and every read of a SIM's messages looked cheaper than it is.
  await step(
    b,
    db,
    "evidence: messages in the order they arrive",
    `insert into evidence.messages (${columns.join(", ")})
     select ${columns.join(", ")} from public.history_chained order by received_at, stored_at, id`,
  );
  await db.query(`drop table public.history_chained`);
  await db.query(`set session_replication_role = origin`);
  b.loaded("evidence.messages");
  await step(
    b,
    db,
    "evidence: daily reconciliations",
    `insert into evidence.daily_reconciliations (sim_id, day, messages, confirmed, restated, attached, unmatched,
       ambiguous, divergent, dismissed, movements, proven_xaf, fees_xaf, movements_in_xaf, movements_out_xaf,
       last_balance, last_balance_at, updated_at)
     select sim_id, (received_at at time zone 'UTC' + interval '1 hour')::date, count(*),
       count(*) filter (where outcome = 'confirmed'), 0, 0,
       count(*) filter (where outcome = 'orphan' and dismissed_at is null), 0, 0,
       count(*) filter (where dismissed_at is not null), count(*) filter (where outcome = 'movement'),
       coalesce(sum(amount) filter (where outcome = 'confirmed'), 0), 0,
       coalesce(sum(amount) filter (where outcome = 'movement'), 0), 0,
       (array_agg(balance_after order by received_at desc, stored_at desc, id desc))[1], max(received_at), max(received_at)
     from evidence.messages where received_at <= $1 group by 1, 2
     on conflict (sim_id, day) do nothing`,
    [b.end],
  );
}

/** SIMs whose messages move from the unlogged copy to evidence.messages in one statement. */
const SIMS_A_STEP = 10;

/**
 * The messages of SIMs `$1` to `$2` (history_sims' idx) into `history_chained`, with every
 * balance chained: in the chain's order (received, stored, id: domain/balance-chain.ts), each
 * message's balance after is the previous one's moved by this message (out: amount and fee
 * debited; in: credited; a balance reply: nothing), starting where the SIM's lowest balance
 * comes to 1,000,000 FCFA. A proof's balance before is its balance after less what it moved,
 * and its text prints the balance after, as the parser reads them. (The operations keep the
 * balance written with them: no route compares the two.)
 */
const chainedMessages = (columns: readonly string[]) => {
  const value = (c: string) =>
    c === "balance_after" || c === "balance"
      ? `case when x.${c} is not null then 1000000 - x.lowest + x.run end`
      : c === "previous_balance"
        ? `case when x.${c} is not null then 1000000 - x.lowest + x.run - x.delta end`
        : c === "raw_text"
          ? `case when x.link = 'proof' then regexp_replace(x.raw_text, 'Solde : [0-9]+', 'Solde : ' || (1000000 - x.lowest + x.run)) else x.raw_text end`
          : `x.${c}`;
  return `insert into public.history_chained (${columns.join(", ")})
     select ${columns.map(value).join(", ")}
     from (select r.*, min(r.run) over (partition by r.sim_id) as lowest
           from (select d.*, sum(d.delta) over (partition by d.sim_id order by d.received_at, d.stored_at, d.id) as run
                 from (select m.*, case when m.kind = 'BAL' then 0
                                        when m.direction = 'in' then m.amount - coalesce(m.fee, 0)
                                        else -m.amount - coalesce(m.fee, 0) end as delta
                       from public.history_messages m
                       where m.sim_id in (select sim_id from public.history_sims where idx between $1 and $2)) d) r) x`;
};

/** A chunk of the messages no operation proves, `$1` to `$5` of `$2`, in time order. */
const UNLINKED_SQL = (sims: number) =>
  `insert into public.history_messages (id, sim_id, sms_hash, sender, raw_text, received_at, device_received_at,
         client_message_id, subscription_slot, kind, amount, balance_after, operator_ref, direction, language,
         parse_rule, state, outcome, balance_state, balance, dismissed_at, dismiss_reason, dismissed_by, stored_at,
         correlated_at)
       select x.id, s.sim_id, encode(sha256(x.id::text::bytea), 'hex'), 'OrangeMoney', x.raw, x.t, x.t,
         left(x.id::text, 36), 0, x.kind, x.amount, 1000000 + x.g % 5000000, 'MV' || x.g,
         case when x.kind = 'UV_IN' then 'in' when x.kind = 'DEP' then 'out' end, 'fr', 'operator_b.' || lower(x.kind),
         'done', x.outcome, 'done', 1000000 + x.g % 5000000,
         case when x.dismissed then x.t + interval '2 hours' end, case when x.kind = 'BAL' then 'balance_reading' when x.dismissed then 'not_ours' end,
         case when x.dismissed then 'history' end, x.t, x.t
       from (select g, gen_random_uuid() as id, t, r,
               case when r < 0.2 then 'DEP' when r < 0.8 then 'UV_IN' else 'BAL' end as kind,
               case when r < 0.2 then 'orphan' when r < 0.8 then 'movement' else 'stored' end as outcome,
               case when r < 0.8 then (1 + floor(random() * 400)) * 250 end as amount,
               r < 0.02 or r >= 0.8 as dismissed,
               case when r < 0.2 then 'Depot reussi, montant ' when r < 0.7 then 'Vous avez recu ' else 'Votre solde est de ' end
                 || g || ' FCFA' as raw
             from (select g, random() as r,
                     $3::timestamptz - ($4::double precision * (1 - g::double precision / $2)) * interval '1 second' as t
                   from generate_series($1::int, $5::int) g) q) x
       join public.history_sims s on s.idx = x.g % ${sims}`;

/** Fleet's audit log and notifications, messaging's contacts: nothing of them depends on the operations. */
async function loadFleetAndContacts(b: Build, db: pg.Client): Promise<void> {
  await step(
    b,
    db,
    "fleet: audit rows",
    `insert into fleet.audit_log (at, actor_agent_id, action, target_id, details)
     select $2::timestamptz - ($3::double precision * (1 - g::double precision / $1)) * interval '1 second',
       md5('agent' || (1 + g % ${HISTORY_AGENTS}))::uuid,
       (array['operation.settle','sim.balance_recorded','agent.login','access.granted','sim.frozen','evidence.dismissed'])[1 + g % 6],
       md5('target' || g), jsonb_build_object('note', 'history ' || g)
     from generate_series(1, $1::int) g`,
    [Math.floor(b.size.operations / 10), b.end, b.spanS],
  );
  b.loaded("fleet.audit_log");
  await step(
    b,
    db,
    "fleet: notifications",
    `insert into fleet.notifications (id, kind, severity, message, sim_id, raised_at, dedupe_key, acknowledged_at, created_at)
     select gen_random_uuid(), (array['low_balance','device_silent','balance_chain_break','wording_drift'])[1 + g % 4],
       case when g % 4 = 0 then 'warning' else 'info' end, 'history notification ' || g, md5('sim' || (1 + g % ${HISTORY_SIMS})),
       t, 'history-' || g, case when g % 10 <> 0 then t + interval '1 hour' end, t
     from (select g, $2::timestamptz - ($3::double precision * (1 - g::double precision / $1)) * interval '1 second' as t
           from generate_series(1, $1::int) g) q`,
    [Math.floor(b.size.operations / 50), b.end, b.spanS],
  );
  await step(
    b,
    db,
    "messaging: contacts",
    `insert into messaging.contacts (customer_id, first_name, last_name, phone, email, created_at, updated_at,
       last_transfer_at, transfer_count)
     select gen_random_uuid(), (array['Aïcha','Jean','Marie','Paul','Estelle','Ibrahim','Clarisse','Serge'])[1 + g % 8] || g,
       (array['Nkomo','Mbarga','Fotso','Tchoua','Abena','Kamga','Bello','Ndongo'])[1 + (g / 8) % 8],
       '+2376' || lpad((g + 70000000)::text, 8, '0'), 'h' || g || '@example.cm',
       $2::timestamptz - interval '400 days', $2::timestamptz - (g % 100) * interval '1 day', $2::timestamptz, 1 + g % 20
     from generate_series(0, $1::int - 1) g`,
    [b.customers, b.end],
  );
  b.loaded("messaging.contacts");
}

/** Intake's transactions (launched and done), one per twenty operations. */
async function loadTransactions(b: Build, db: pg.Client): Promise<void> {
  await step(
    b,
    db,
    "intake: transactions",
    `insert into intake.transactions (id, request_id, contact_id, customer_name, customer_phone, receiver_name,
       receiver_phone, operator, received_amount_xaf, rate, send_amount_eur, transaction_date, state, launched_by,
       launched_at, operation_id, outcome, settled_at, created_at, updated_at)
     select gen_random_uuid(), 'history-' || o.request_id, 'c' || o.msisdn_dest, 'Customer', '+33600000000', o.dest_name,
       o.msisdn_dest, o.operator, o.montant, 655.957, o.montant / 655.957, o.created_at,
       case when o.status = 'confirmed' then 'done' else 'cancelled' end, o.agent_id, o.created_at, o.operation_id,
       o.status, o.finished_at, o.created_at - interval '1 hour', o.finished_at
     from dispatch.operations o where o.op_type = 'deposit' and o.request_id like 'history-%'
       and substr(o.request_id, 9)::int % 20 = 0`,
  );
}

/** Analytics' read model of the same operations and messages, rollups rebuilt in one pass. */
async function loadAnalytics(b: Build, db: pg.Client): Promise<void> {
  await db.query(`set session_replication_role = replica`);
  await step(
    b,
    db,
    "analytics: operations",
    `insert into analytics.operations (operation_id, agent_id, sim_id, device_id, device_label, op_type, is_transfer,
       status, montant, created_at, local_day, local_dow, local_hour, finished_at, dialled, confirmed_by,
       touched_by_hand, settled_by_hand, lost, fee, proof_delay_s, changed_at)
     select o.operation_id, o.agent_id, o.sim_id::uuid, o.device_id, o.device_label, o.op_type, o.op_type <> 'balance',
       o.status, o.montant, o.created_at, (o.created_at at time zone 'UTC' + interval '1 hour')::date,
       extract(isodow from o.created_at at time zone 'UTC' + interval '1 hour'),
       extract(hour from o.created_at at time zone 'UTC' + interval '1 hour'), o.finished_at, o.started_at is not null,
       o.confirmed_by, coalesce(o.confirmed_by in ('attach', 'settle', 'arbitrate'), false),
       case when o.confirmed_by in ('settle', 'arbitrate') then 'arrived' end, false, o.evidence_fee,
       case when o.confirmed_by = 'proof' then 40 end, o.updated_at
     from dispatch.operations o where o.request_id like 'history-%'`,
  );
  await step(
    b,
    db,
    "analytics: messages",
    `insert into analytics.messages (message_id, sim_id, received_at, local_day, kind, outcome, is_ambiguous, operation_id, dismissed_at)
     select id, sim_id::uuid, received_at, (received_at at time zone 'UTC' + interval '1 hour')::date, kind, outcome,
       is_ambiguous, operation_id, dismissed_at
     from evidence.messages where received_at <= $1`,
    [b.end],
  );
  // Before their indexes are built (which counts their rows for the planner): the rollups are
  // grouped as before, and their rows go in in the same order; triggers still off, so that the
  // monthly copies are summed once from the daily tables, not upserted a daily row at a time.
  await step(b, db, "analytics: rollups", `select analytics.rebuild_rollups()`);
  await step(b, db, "analytics: monthly rollups", `select analytics.rebuild_monthly_rollups()`);
  await db.query(`set session_replication_role = origin`);
  b.loaded("analytics.operations");
  b.loaded("analytics.messages");
}

/**
 * Outbox rows the relays published and the retention has not pruned yet (the last 7 days) of
 * one schema's source table.
 */
async function loadOutbox(b: Build, db: pg.Client, schema: string, source: string, perRow: number, topic: string) {
  const week = `$1::timestamptz - interval '7 days'`;
  await step(
    b,
    db,
    `${schema}: outbox (published, last 7 days)`,
    `insert into ${schema}.outbox (id, topic, key, type, payload, headers, created_at, published_at)
     select gen_random_uuid(), '${topic}', 'k' || g, 'history', ${PAYLOAD}, ${HEADERS}, $1::timestamptz, $1::timestamptz
     from generate_series(1, (select count(*) * ${perRow} from ${source.replace("$week", week)})::int) g`,
    [b.end],
  );
  b.loaded(`${schema}.outbox`);
}

/** Inbox rows of every event one consumer applied, which nothing prunes. */
async function loadInbox(b: Build, db: pg.Client, schema: string, consumer: string, events: string, last = true) {
  await step(
    b,
    db,
    `${schema}: inbox`,
    `insert into ${schema}.inbox (event_id, consumer, received_at)
     select gen_random_uuid(), '${consumer}', t from (${events}) e`,
  );
  if (last) b.loaded(`${schema}.inbox`);
}

/** The events of each operation (`n` of them), as a consumer received them. */
const opEvents = (n: number) =>
  `select created_at + k * interval '20 seconds' as t from dispatch.operations, generate_series(1, ${n}) k`;
const MESSAGE_EVENTS = `select received_at + k * interval '1 second' as t from evidence.messages, generate_series(1, 2) k`;

/**
 * What follows from the operations alone (second connection): intake's transactions, dispatch's
 * outbox, the inboxes of the consumers of operation events (analytics applies three an
 * operation; fleet's webhooks, intake and messaging one a finished operation).
 */
async function loadFromOperations(b: Build, db: pg.Client): Promise<void> {
  await loadTransactions(b, db);
  await loadOutbox(b, db, "dispatch", "dispatch.operations where created_at >= $week", 3, "operations");
  await loadInbox(b, db, "fleet", "fleet.operations", opEvents(1));
  await loadInbox(b, db, "intake", "intake.operations", opEvents(1));
  await loadInbox(b, db, "messaging", "messaging.operations", opEvents(1));
  await loadInbox(b, db, "analytics", "analytics.operations", opEvents(3), false);
}

/**
 * A connection of the build: asynchronous commit (a lost build is built again), the same seed,
 * and every scan of a table from its first page: with synchronized scans (the default) a scan
 * of a table another connection is reading starts where that one is, and the rows it copies
 * go in in another order than a lone build's (the tables' correlations would differ).
 */
async function connect(url: string): Promise<pg.Client> {
  const db = new pg.Client({ connectionString: url, application_name: "history build" });
  db.on("error", () => undefined);
  await db.connect();
  await db.query(`set synchronous_commit = off`);
  await db.query(`set synchronize_seqscans = off`);
  await db.query(`select setseed(0.41)`);
  return db;
}

/**
 * Writes the history into the database at `url` on two connections (the machine has two cores):
 * the first writes the operations, their proofs, the messages and analytics' read model, in the
 * order each table had them before (same statements, same seed: the same random draws); the
 * second meanwhile the tables that do not depend on them, then those that depend only on the
 * operations; each table is filled by one connection only, in time order. The bulk tables'
 * indexes are dropped before (history-load.ts), and a third connection builds each table's
 * again as soon as that table is loaded; the loading connections join it when done. At the end
 * every index of the six schemas is checked against the schema's own.
 */
export async function buildHistory(
  url: string,
  size: HistorySize,
  log: (s: string) => void,
): Promise<{ steps: Step[]; indexes: { name: string; s: number }[] }> {
  const lanes = [await connect(url), await connect(url), await connect(url)];
  const [a, c, i] = lanes;
  try {
    const before = await indexCatalogue(a);
    const written = await serverWrites(a);
    const dropped = await dropBulkIndexes(a);
    log(`  history: ${dropped.length} indexes of ${BULK_TABLES.length} bulk tables dropped for the load`);
    const rebuild = new IndexRebuild(dropped);
    const building = rebuild.lane(i);
    building.catch(() => undefined);
    const b: Build = {
      size,
      end: size.end.toISOString(),
      spanS: size.days * 86_400,
      sims: HISTORY_SIMS + size.sims.length,
      agents: HISTORY_AGENTS + 1,
      customers: Math.max(1000, Math.floor(size.operations / 10)),
      steps: [],
      log,
      loaded: (table) => rebuild.loaded(table),
    };
    const t0 = performance.now();
    await loadAll(b, a, c);
    const t = performance.now();
    rebuild.close();
    await Promise.all([building, rebuild.lane(a), rebuild.lane(c)]);
    const s = (from: number, to = performance.now()) => `${((to - from) / 1000).toFixed(1)} s`;
    log(`  history: loaded in ${s(t0, t)}; the last of the ${dropped.length} indexes built ${s(t)} after`);
    log(`  history: ${await writtenSince(a, written)}`);
    sameIndexes(before, await indexCatalogue(a));
    // What the trigger of Migration0011DayChains would have counted: a row a SIM day, none kept.
    // Written last, when every index is there again: from here the day keeper (a short interval
    // in the benchmark) sums the closed days, newest first, as a running system did day after day.
    await step(
      b,
      a,
      "evidence: days' chain counts",
      `insert into evidence.day_chains as c (sim_id, day, changes)
       select sim_id, day, messages from evidence.daily_reconciliations order by sim_id, day
       on conflict (sim_id, day) do update set changes = c.changes + excluded.changes`,
    );
    await a.query(`drop table public.history_sims, public.history_agents`);
    return { steps: b.steps, indexes: rebuild.times };
  } finally {
    await Promise.all(lanes.map((db) => db.end()));
  }
}

/** The rows, on the two connections: `a` the chain of what depends on what, `c` the rest. */
async function loadAll(b: Build, a: pg.Client, c: pg.Client): Promise<void> {
  let operationsDone!: () => void;
  const operations = new Promise<void>((res) => (operationsDone = res));
  const first = (async () => {
    await loadOperations(b, a);
    operationsDone();
    await loadMessages(b, a);
    await loadAnalytics(b, a);
    await loadOutbox(b, a, "evidence", "evidence.messages where received_at >= $week", 2, "messages");
  })();
  const second = (async () => {
    await loadFleetAndContacts(b, c);
    await loadOutbox(b, c, "fleet", "fleet.audit_log where at >= $week", 1, "fleet");
    await operations;
    await loadFromOperations(b, c);
  })();
  // Either failing stops the build (the other's statement is left to finish; the benchmark's
  // database is dropped at its end).
  second.catch(() => undefined);
  await Promise.all([first, second]);
  await loadInbox(b, a, "analytics", "analytics.messages", MESSAGE_EVENTS);
}
