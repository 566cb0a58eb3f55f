import { one, type EntityManager } from "@transferops/kit";

/**
 * Writes of the read model. Every event goes through the inbox (applied once); these
 * writes are also ordered by the event's own time, so a late or replayed older event
 * never overwrites a newer state.
 */

export interface OperationFacts {
  operation_id: string;
  agent_id: string;
  sim_id: string | null;
  device_id: string | null;
  device_label: string | null;
  op_type: string;
  is_transfer: boolean;
  status: string;
  montant: bigint;
  created_at: Date;
  local_day: string;
  local_dow: number;
  local_hour: number;
  finished_at: Date | null;
  dialled: boolean;
  confirmed_by: string | null;
  touched_by_hand: boolean;
  has_message: boolean;
  settled_by_hand: string | null;
  lost: boolean;
  fee: bigint | null;
  proof_delay_s: number | null;
  changed_at: Date;
}

const OPERATION_COLUMNS = [
  "operation_id",
  "agent_id",
  "sim_id",
  "device_id",
  "device_label",
  "op_type",
  "is_transfer",
  "status",
  "montant",
  "created_at",
  "local_day",
  "local_dow",
  "local_hour",
  "finished_at",
  "dialled",
  "confirmed_by",
  "touched_by_hand",
  "has_message",
  "settled_by_hand",
  "lost",
  "fee",
  "proof_delay_s",
  "changed_at",
] as const;

/**
 * Upserts an operation from one of its transitions. The state columns follow the newest
 * change (the amount too: a matching operation's amount is edited while it awaits its dial); what happened once (dialled, a person's hand, the proof) is kept whatever the order.
 */
export async function applyOperation(em: EntityManager, f: OperationFacts): Promise<void> {
  const newer = `analytics.operations.changed_at <= excluded.changed_at`;
  await em.execute(
    `insert into analytics.operations (${OPERATION_COLUMNS.join(", ")})
     values (${OPERATION_COLUMNS.map(() => "?").join(", ")})
     on conflict (operation_id) do update set
       sim_id = case when ${newer} then excluded.sim_id else analytics.operations.sim_id end,
       device_id = case when ${newer} then excluded.device_id else analytics.operations.device_id end,
       status = case when ${newer} then excluded.status else analytics.operations.status end,
       montant = case when ${newer} then excluded.montant else analytics.operations.montant end,
       finished_at = coalesce(analytics.operations.finished_at, excluded.finished_at),
       dialled = analytics.operations.dialled or excluded.dialled,
       confirmed_by = coalesce(analytics.operations.confirmed_by, excluded.confirmed_by),
       touched_by_hand = analytics.operations.touched_by_hand or excluded.touched_by_hand,
       has_message = analytics.operations.has_message or excluded.has_message,
       settled_by_hand = coalesce(analytics.operations.settled_by_hand, excluded.settled_by_hand),
       lost = analytics.operations.lost or excluded.lost,
       fee = coalesce(analytics.operations.fee, excluded.fee),
       proof_delay_s = coalesce(analytics.operations.proof_delay_s, excluded.proof_delay_s),
       changed_at = greatest(analytics.operations.changed_at, excluded.changed_at)`,
    OPERATION_COLUMNS.map((c) => f[c]) as never[],
  );
}

export interface MessageFacts {
  message_id: string;
  sim_id: string | null;
  received_at: Date;
  local_day: string;
  kind: string | null;
  outcome: string;
  is_ambiguous: boolean;
  operation_id: string | null;
}

/** A stored or correlated message: later outcomes replace `pending`; ambiguity and a link stay. */
export async function applyMessage(em: EntityManager, m: MessageFacts): Promise<void> {
  await em.execute(
    `insert into analytics.messages (message_id, sim_id, received_at, local_day, kind, outcome, is_ambiguous, operation_id)
     values (?, ?, ?, ?, ?, ?, ?, ?)
     on conflict (message_id) do update set
       kind = coalesce(excluded.kind, analytics.messages.kind),
       outcome = case when analytics.messages.outcome in ('pending', 'not_correlated') or excluded.outcome = 'attached'
                      then excluded.outcome else analytics.messages.outcome end,
       is_ambiguous = analytics.messages.is_ambiguous or excluded.is_ambiguous,
       operation_id = coalesce(analytics.messages.operation_id, excluded.operation_id)`,
    [m.message_id, m.sim_id, m.received_at, m.local_day, m.kind, m.outcome, m.is_ambiguous, m.operation_id],
  );
}

export async function dismissMessage(em: EntityManager, messageId: string, at: Date): Promise<void> {
  await em.execute(`update analytics.messages set dismissed_at = coalesce(dismissed_at, ?) where message_id = ?`, [
    at,
    messageId,
  ]);
}

export async function purgeMessages(em: EntityManager, simId: string | null): Promise<void> {
  if (simId) await em.execute(`delete from analytics.messages where sim_id = ?`, [simId]);
  else await em.execute(`delete from analytics.messages`);
}

export interface TransactionFacts {
  transaction_id: string;
  state: string;
  received_amount_xaf: bigint;
  send_amount_eur: number | null;
  rate: number | null;
  operation_id: string | null;
  launched_by: string | null;
  transaction_date: Date;
  local_day: string;
  changed_at: Date;
}

/**
 * A transaction as intake's event states it, when newer than what is stored. Each event carries
 * intake's whole row: a released launch says `launched_by` null, and the read model follows
 * (the operation, once linked, is never unlinked by intake).
 */
export async function applyTransaction(em: EntityManager, t: TransactionFacts): Promise<void> {
  await em.execute(
    `insert into analytics.transactions (transaction_id, state, received_amount_xaf, send_amount_eur, rate, operation_id,
       launched_by, transaction_date, local_day, changed_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     on conflict (transaction_id) do update set state = excluded.state,
       received_amount_xaf = excluded.received_amount_xaf, send_amount_eur = excluded.send_amount_eur,
       rate = excluded.rate, operation_id = coalesce(excluded.operation_id, analytics.transactions.operation_id),
       launched_by = excluded.launched_by,
       transaction_date = excluded.transaction_date, local_day = excluded.local_day, changed_at = excluded.changed_at
     where analytics.transactions.changed_at <= excluded.changed_at`,
    [
      t.transaction_id,
      t.state,
      t.received_amount_xaf,
      t.send_amount_eur,
      t.rate,
      t.operation_id,
      t.launched_by,
      t.transaction_date,
      t.local_day,
      t.changed_at,
    ],
  );
}

export interface SimFacts {
  sim_id: string;
  status: string;
  device_id: string | null;
  balance_mirror: bigint | null;
  balance_updated_at: Date | null;
}

export async function applySim(em: EntityManager, s: SimFacts): Promise<void> {
  await em.execute(
    `insert into analytics.sims (sim_id, status, device_id, balance_mirror, balance_updated_at) values (?, ?, ?, ?, ?)
     on conflict (sim_id) do update set status = excluded.status, device_id = excluded.device_id,
       balance_mirror = excluded.balance_mirror, balance_updated_at = excluded.balance_updated_at`,
    [s.sim_id, s.status, s.device_id, s.balance_mirror, s.balance_updated_at],
  );
}

export async function deleteSim(em: EntityManager, simId: string): Promise<void> {
  await em.execute(`delete from analytics.sims where sim_id = ?`, [simId]);
}

export async function applyDevice(em: EntityManager, deviceId: string, label: string): Promise<void> {
  await em.execute(
    `insert into analytics.devices (device_id, label) values (?, ?)
     on conflict (device_id) do update set label = excluded.label`,
    [deviceId, label],
  );
}

export async function deleteDevice(em: EntityManager, deviceId: string): Promise<void> {
  await em.execute(`delete from analytics.devices where device_id = ?`, [deviceId]);
  await em.execute(`update analytics.sims set device_id = null where device_id = ?`, [deviceId]);
}

/**
 * A production-data reset deleted operations, messages, SIMs, devices and non-admin
 * agents everywhere: clear their projections and remember when, so that events older
 * than the reset (a replay from the beginning) are not projected again.
 */
export async function applyReset(em: EntityManager, at: Date, agentIds: string[]): Promise<void> {
  for (const table of ["operations", "messages", "sims", "devices"]) await em.execute(`delete from analytics.${table}`);
  if (agentIds.length) await em.execute(`delete from analytics.agents where agent_id in (?)`, [agentIds]);
  await em.execute(`insert into analytics.resets (reset_at) values (?) on conflict do nothing`, [at]);
}

/** Whether an event that occurred at `at` precedes the last production-data reset. */
export async function beforeLastReset(em: EntityManager, at: Date): Promise<boolean> {
  const r = await one<{ last: Date | null }>(em, `select max(reset_at) as last from analytics.resets`);
  return !!r?.last && at <= new Date(r.last);
}
