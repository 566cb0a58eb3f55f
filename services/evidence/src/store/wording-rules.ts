import { one, rows, type EntityManager } from "@transferops/kit";
import type { WordingRuleRecord, WordingRuleState } from "../domain/wording-rule.ts";
import type { TaughtReading } from "../domain/parsers/taught-export.ts";

const COLUMNS = `id, rule_id, version, operator, kind, language, direction, template, state, created_at, created_by,
  activated_at, activated_by, retired_at, retired_by, reread_state, reread_after_at, reread_after_id,
  reread_messages, reread_confirmed`;

type Row = Omit<WordingRuleRecord, "reread_messages" | "reread_confirmed"> & {
  reread_messages: string | number;
  reread_confirmed: string | number;
};

const date = (v: Date | string | null): Date | null => (v === null ? null : new Date(v));

function record(r: Row): WordingRuleRecord {
  return {
    ...r,
    created_at: date(r.created_at)!,
    activated_at: date(r.activated_at),
    retired_at: date(r.retired_at),
    reread_after_at: date(r.reread_after_at),
    reread_messages: Number(r.reread_messages),
    reread_confirmed: Number(r.reread_confirmed),
  };
}

export type NewWordingRule = Pick<
  WordingRuleRecord,
  "id" | "rule_id" | "operator" | "kind" | "language" | "direction" | "template" | "created_by"
>;

/**
 * Stores a draft as the rule's next version. The rule's versions are locked first (an
 * advisory lock on the rule id), so two drafts added at once get two numbers.
 */
export async function insertWordingRule(em: EntityManager, r: NewWordingRule): Promise<WordingRuleRecord> {
  await em.execute(`select pg_advisory_xact_lock(hashtext('evidence.wording_rule'), hashtext(?))`, [r.rule_id]);
  const inserted = await one<Row>(
    em,
    `insert into evidence.wording_rules (id, rule_id, version, operator, kind, language, direction, template, created_by)
     select ?, ?, coalesce(max(version), 0) + 1, ?, ?, ?, ?, ?, ? from evidence.wording_rules where rule_id = ?
     returning ${COLUMNS}`,
    [r.id, r.rule_id, r.operator, r.kind, r.language, r.direction, r.template, r.created_by, r.rule_id],
  );
  return record(inserted!);
}

/** Any version of the rule (its operator must stay the same across versions). */
export async function findRule(em: EntityManager, ruleId: string): Promise<WordingRuleRecord | undefined> {
  const r = await one<Row>(
    em,
    `select ${COLUMNS} from evidence.wording_rules where rule_id = ? order by version desc limit 1`,
    [ruleId],
  );
  return r && record(r);
}

export async function findVersion(em: EntityManager, id: string, lock = false): Promise<WordingRuleRecord | undefined> {
  const r = await one<Row>(
    em,
    `select ${COLUMNS} from evidence.wording_rules where id = ?${lock ? " for update" : ""}`,
    [id],
  );
  return r && record(r);
}

export async function listWordingRules(
  em: EntityManager,
  filter: { operator?: string; state?: string },
): Promise<WordingRuleRecord[]> {
  const found = await rows<Row>(
    em,
    `select ${COLUMNS} from evidence.wording_rules
      where (?::text is null or operator = ?) and (?::text is null or state = ?)
      order by created_at desc, version desc limit 500`,
    [filter.operator ?? null, filter.operator ?? null, filter.state ?? null, filter.state ?? null],
  );
  return found.map(record);
}

/** The active versions of an operator's rules, oldest activation first (the order they are tried in). */
export async function activeWordingRules(em: EntityManager, operator: string): Promise<WordingRuleRecord[]> {
  const found = await rows<Row>(
    em,
    `select ${COLUMNS} from evidence.wording_rules where state = 'active' and operator = ?
      order by activated_at, id`,
    [operator],
  );
  return found.map(record);
}

/**
 * A version that read texts (it was active) is re-read when it retires: its running
 * re-reading, if any, gives way to the re-reading of what it read (the cursor starts again);
 * a draft read nothing and has none.
 */
const REREAD_RETIRED = `reread_state = case when activated_at is null then reread_state else 'running' end,
       reread_after_at = case when activated_at is null then reread_after_at end,
       reread_after_id = case when activated_at is null then reread_after_id end`;

/**
 * What identifies the set of active versions: how many are active and how many were ever
 * retired. Every change of the set changes it (an activation adds an active version or
 * retires the rule's previous one; a retirement retires one; retired never goes down), and
 * the latest activation and retirement times tell a set emptied by a reset (tests) from the
 * one before it. An equal stamp means the same active set. One pass over a table of a few rows.
 */
export async function activeRulesStamp(em: EntityManager): Promise<string> {
  const r = await one<{
    active: string | number;
    retired: string | number;
    activated: string | null;
    retired_at: string | null;
  }>(
    em,
    `select count(*) filter (where state = 'active') as active, count(*) filter (where state = 'retired') as retired,
       max(activated_at)::text as activated, max(retired_at)::text as retired_at
       from evidence.wording_rules`,
  );
  return `${r!.active}/${r!.retired}/${r!.activated ?? ""}/${r!.retired_at ?? ""}`;
}

/** Activates a locked draft; the rule's active version, if any, is retired (and re-read) by the same actor. */
export async function activateVersion(
  em: EntityManager,
  v: WordingRuleRecord,
  actor: string,
): Promise<{ activated: WordingRuleRecord; retired?: WordingRuleRecord }> {
  const previous = await one<Row>(
    em,
    `update evidence.wording_rules set state = 'retired', retired_at = now(), retired_by = ?, ${REREAD_RETIRED}
      where rule_id = ? and state = 'active' returning ${COLUMNS}`,
    [actor, v.rule_id],
  );
  const activated = await one<Row>(
    em,
    `update evidence.wording_rules set state = 'active', activated_at = now(), activated_by = ?, reread_state = 'running'
      where id = ? returning ${COLUMNS}`,
    [actor, v.id],
  );
  return { activated: record(activated!), retired: previous && record(previous) };
}

export async function retireVersion(em: EntityManager, id: string, actor: string): Promise<WordingRuleRecord> {
  const r = await one<Row>(
    em,
    `update evidence.wording_rules set state = 'retired', retired_at = now(), retired_by = ?, ${REREAD_RETIRED}
     where id = ? returning ${COLUMNS}`,
    [actor, id],
  );
  return record(r!);
}

/** Versions whose re-reading has not finished (a crash resumes them). */
export async function rereadsRunning(em: EntityManager): Promise<WordingRuleRecord[]> {
  const found = await rows<Row>(
    em,
    `select ${COLUMNS} from evidence.wording_rules where reread_state = 'running' order by activated_at, id`,
  );
  return found.map(record);
}

/**
 * Moves a re-reading's cursor past a batch's last message (its stored_at read from the row, at
 * full precision), or ends it.
 */
export async function advanceReread(
  em: EntityManager,
  id: string,
  step: { afterMessageId?: string; messages: number; confirmed: number; done: boolean },
): Promise<void> {
  await em.execute(
    `update evidence.wording_rules w set
       reread_after_at = coalesce((select m.stored_at from evidence.messages m where m.id = ?::uuid), w.reread_after_at),
       reread_after_id = case when exists (select 1 from evidence.messages m where m.id = ?::uuid) then ?::uuid
                              else w.reread_after_id end,
       reread_messages = reread_messages + ?, reread_confirmed = reread_confirmed + ?,
       reread_state = case when ? then 'done' else reread_state end
     where id = ? and reread_state = 'running'`,
    [
      step.afterMessageId ?? null,
      step.afterMessageId ?? null,
      step.afterMessageId ?? null,
      step.messages,
      step.confirmed,
      step.done,
      id,
    ],
  );
}

export type { WordingRuleState };

/** The newest texts a rule read (`parse_rule`), with what it read: the examples of an export. */
export async function textsReadBy(em: EntityManager, parseRule: string, limit: number): Promise<TaughtReading[]> {
  const found = await rows<Omit<TaughtReading, "amount" | "fee" | "balance_after"> & Record<string, unknown>>(
    em,
    `select raw_text as text, kind, amount, fee, balance_after, operator_ref, counterparty_msisdn,
            counterparty_name, direction
       from evidence.messages where parse_rule = ? order by received_at desc, id limit ?`,
    [parseRule, limit],
  );
  const figure = (v: unknown) => (v === null || v === undefined ? null : Number(v));
  return found.map((r) => ({
    ...r,
    amount: figure(r.amount),
    fee: figure(r.fee),
    balance_after: figure(r.balance_after),
  })) as TaughtReading[];
}
