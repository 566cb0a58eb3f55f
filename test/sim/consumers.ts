// Exactly once, consumer by consumer (invariant 12): what each consumer made of the events it
// took agrees with their source. A consumer writes its inbox row and its effect in one
// transaction, and a producer its row and its outbox event in one, so one statement (one
// snapshot of every schema: the services share the simulation's database) can say, at any
// time, whether an effect is missing or doubled: an entity whose latest event the consumer's
// inbox holds must look in the consumer as it looks at its source, and a count must count the
// events its inbox holds, once each. So a consumer that acknowledges an event and skips its
// effect (or applies it twice) is seen at the next check, not only at the end. Once drained,
// every event a consumer takes must be in its inbox (an event acknowledged and never applied:
// an offset committed before a crash).
//
// Consumers judged: analytics' operations, transactions and messages (their rows against
// dispatch's, intake's and evidence's), messaging's (a contact's transfer_count against the
// confirmations of operations naming it that its inbox holds), intake's (a launched
// transaction settled by its operation's terminal status). Not judged here: fleet.events
// (notifications, webhook deliveries), dispatch.fleet and evidence.fleet.

type Query = <T>(sql: string, params?: unknown[]) => Promise<T[]>;
type Problem = { detail: string; ids: string[] };

/** The latest event of each entity (the outbox key) among those of `types`, in `producer`'s outbox. */
const latest = (producer: string, types: string) =>
  `select distinct on (key) key, id from "${producer}".outbox where type ~ '\\.(${types})$' order by key, seq desc`;

/** Statuses that settle a launched transaction (kit's TERMINAL_OPERATION_STATUSES). */
const TERMINAL = ["confirmed", "failed", "no_evidence", "rejected"];

interface Disagreement {
  id: string;
  source: string;
  consumer: string;
}

/** A consumer's rows against their source, where the consumer holds the entity's latest event. */
const CHECKS: { consumer: string; what: string; sql: string }[] = [
  {
    consumer: "analytics.operations",
    what: "operation",
    sql: `with last as (${latest("dispatch", "OperationChanged")})
      select o.operation_id::text as id,
             concat_ws(' ', o.status, o.agent_id::text, o.sim_id::text, o.montant::text) as source,
             case when a.operation_id is null then 'no row'
                  else concat_ws(' ', a.status, a.agent_id::text, a.sim_id::text, a.montant::text) end as consumer
        from last l join dispatch.operations o on o.operation_id::text = l.key
        join analytics.inbox i on i.consumer = 'analytics.operations' and i.event_id = l.id
        left join analytics.operations a on a.operation_id = o.operation_id
       where a.operation_id is null
          or (a.status, a.agent_id::text, a.sim_id::text, a.montant)
             is distinct from (o.status, o.agent_id::text, o.sim_id::text, o.montant)`,
  },
  {
    consumer: "analytics.transactions",
    what: "transaction",
    sql: `with last as (${latest("intake", "TransactionChanged")})
      select t.id::text,
             concat_ws(' ', t.state, t.received_amount_xaf::text, t.operation_id::text, t.launched_by::text) as source,
             case when a.transaction_id is null then 'no row'
                  else concat_ws(' ', a.state, a.received_amount_xaf::text, a.operation_id::text, a.launched_by::text) end
               as consumer
        from last l join intake.transactions t on t.id::text = l.key
        join analytics.inbox i on i.consumer = 'analytics.transactions' and i.event_id = l.id
        left join analytics.transactions a on a.transaction_id = t.id
       where a.transaction_id is null
          or (a.state, a.received_amount_xaf, a.operation_id, a.launched_by)
             is distinct from (t.state, t.received_amount_xaf, t.operation_id, t.launched_by)`,
  },
  {
    consumer: "analytics.messages",
    what: "message",
    sql: `with last as (${latest("evidence", "MessageStored|MessageCorrelated|MessageLinked|MessageDismissed")})
      select m.id::text,
             concat_ws(' ', m.sim_id::text, m.operation_id::text, case when m.dismissed_at is null then '' else 'dismissed' end)
               as source,
             case when a.message_id is null then 'no row'
                  else concat_ws(' ', a.sim_id::text, a.operation_id::text,
                                 case when a.dismissed_at is null then '' else 'dismissed' end) end as consumer
        from last l join evidence.messages m on m.id::text = l.key
        join analytics.inbox i on i.consumer = 'analytics.messages' and i.event_id = l.id
        left join analytics.messages a on a.message_id = m.id
       where a.message_id is null
          or (a.sim_id::text, a.operation_id::text, a.dismissed_at is null)
             is distinct from (m.sim_id::text, m.operation_id::text, m.dismissed_at is null)`,
  },
  {
    consumer: "intake.operations",
    what: "transaction",
    sql: `with last as (${latest("dispatch", "OperationChanged")})
      select t.id::text, 'operation ' || o.operation_id::text || ' ' || o.status as source,
             concat_ws(' ', t.state, t.outcome) as consumer
        from intake.transactions t join dispatch.operations o on o.request_id = 'tx-' || t.id::text
        join last l on l.key = o.operation_id::text
        join intake.inbox i on i.consumer = 'intake.operations' and i.event_id = l.id
       where o.status = any('{${TERMINAL.join(",")}}') and (t.state <> 'done' or t.outcome is distinct from o.status)`,
  },
];

/** Every check of the consumers' effects (and, when `final`, of their inboxes); returns how many were judged. */
export async function consumerEffects(
  query: Query,
  contacts: string[],
  final: boolean,
  out: Problem[],
): Promise<number> {
  let judged = 0;
  for (const c of CHECKS) {
    judged++;
    for (const d of await query<Disagreement>(c.sql))
      out.push({
        detail: `${c.consumer} holds the latest event of ${c.what} ${d.id} but shows "${d.consumer}"; its source says "${d.source}"`,
        ids: [d.id],
      });
  }
  judged += await contactCounts(query, contacts, out);
  if (final) judged += await intakeInbox(query, out);
  return judged;
}

/** Messaging: a contact counts each confirmation its inbox holds once (inbox row and count in one transaction). */
async function contactCounts(query: Query, contacts: string[], out: Problem[]): Promise<number> {
  const rows = await query<{ id: string; counted: number; consumed: number; ops: string[] }>(
    `select c.customer_id::text as id, c.transfer_count as counted, count(o.id)::int as consumed,
            coalesce(array_agg(o.key) filter (where o.key is not null), '{}') as ops
       from messaging.contacts c
       left join dispatch.operations op on op.contact_id = c.customer_id::text and op.status = 'confirmed'
       left join dispatch.outbox o on o.key = op.operation_id::text and o.type like '%.OperationConfirmed'
             and exists (select 1 from messaging.inbox i where i.consumer = 'messaging.operations' and i.event_id = o.id)
      where c.customer_id::text = any($1)
      group by c.customer_id, c.transfer_count`,
    [contacts],
  );
  for (const r of rows)
    if (r.counted !== r.consumed)
      out.push({
        detail: `messaging.operations: contact ${r.id} counts ${r.counted} transfers; its inbox holds ${r.consumed} confirmations naming it`,
        ids: r.ops,
      });
  return rows.length;
}

/** Intake, once drained: every change of a launch's operation (request id tx-…) is in its inbox. */
async function intakeInbox(query: Query, out: Problem[]): Promise<number> {
  const missing = await query<{ id: string; type: string; key: string }>(
    `select o.id::text, o.type, o.key from dispatch.outbox o
       join dispatch.operations op on op.operation_id::text = o.key and op.request_id like 'tx-%'
      where o.type like '%.OperationChanged'
        and not exists (select 1 from intake.inbox i where i.consumer = 'intake.operations' and i.event_id = o.id)`,
  );
  for (const m of missing.slice(0, 5))
    out.push({ detail: `intake.operations never consumed ${m.type} ${m.id} (key ${m.key})`, ids: [m.key] });
  return 1;
}
