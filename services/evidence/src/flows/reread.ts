import { SerialJob } from "@transferops/kit";
import type { MessageRecord } from "../domain/message.ts";
import { initialOutcome, routeOf } from "../domain/outcomes.ts";
import { parseMessage } from "../domain/parsers/parse.ts";
import type { Operator, Rule } from "../domain/parsers/types.ts";
import { parseRuleId, type WordingRuleRecord } from "../domain/wording-rule.ts";
import { lockSimMessage, readByRetired, recordReading, rereadableAfter, type RereadScope } from "../store/messages.ts";
import { advanceReread, rereadsRunning } from "../store/wording-rules.ts";
import type { FlowDeps } from "./ports.ts";
import { finish, readingRecorded } from "./submit.ts";
import { taughtRules } from "./taught.ts";
import { simOperators } from "./wording-rules.ts";

export interface RereadOptions {
  intervalMs: number;
  /**
   * Messages stored up to this long after an activation are still read again: a submission
   * that parsed just before the activation committed may store its message just after (the
   * re-drive's grace, the time a live submission is given to finish its own message).
   */
  marginMs: number;
  batchSize?: number;
}

/**
 * After a retirement (by the retire route, or a newer version's activation), reads the
 * messages the retired version read with the operator's remaining rules (built-in and the
 * other active ones), whatever they now read (see `readByRetired`: what confirmed, restated
 * or was attached keeps its reading and link). In batches; it ends once nothing it read is
 * left, none is being correlated, and the margin after the retirement has passed.
 *
 * After an activation, reads the messages nothing proved (orphans, stored and not correlated
 * texts, neither linked nor dismissed) again with the operator's active rules, in batches in
 * storage order. A message a taught rule now reads gets its new fields; one that can now
 * prove something is correlated by the usual flow (dispatch confirms a late proof inside its
 * windows, never twice: it answers a message id it has seen with its first answer); the rest
 * stay what they were, with their new fields. The cursor is saved after each batch, and each
 * message's step is idempotent (a message already read by the same rule is skipped; one left
 * pending is finished here or by the re-drive), so a crash resumes where it stopped.
 */
export class Reread extends SerialJob<number> {
  constructor(
    private readonly deps: FlowDeps,
    private readonly options: RereadOptions,
  ) {
    super("wording re-read pass", options.intervalMs, deps.log);
  }

  /** Runs a pass now (after an activation) unless one is running. */
  kick(): void {
    void this.pass().catch((err: unknown) => this.deps.log.warn({ err }, "wording re-read pass failed"));
  }

  /** One pass: one batch of each running re-read; returns how many messages it read. */
  protected async runPass(now: Date): Promise<number> {
    let read = 0;
    for (const v of await rereadsRunning(this.deps.db.em())) {
      if (this.stopped) break;
      read += await this.batch(v, now);
    }
    return read;
  }

  private batch(v: WordingRuleRecord, now: Date): Promise<number> {
    return v.state === "retired" ? this.retiredBatch(v, now) : this.activatedBatch(v, now);
  }

  private async retiredBatch(v: WordingRuleRecord, now: Date): Promise<number> {
    const { db } = this.deps;
    const until = new Date(v.retired_at!.getTime() + this.options.marginMs);
    const { messages, pending } = await readByRetired(db.em(), parseRuleId(v), this.options.batchSize ?? 100);
    if (messages.length === 0) {
      if (!pending && now.getTime() > until.getTime())
        await advanceReread(db.em(), v.id, { messages: 0, confirmed: 0, done: true });
      return 0;
    }
    // The version is retired: the operator's active rules are the remaining ones.
    const rules = await taughtRules(db.em(), v.operator);
    let changed = 0;
    let confirmed = 0;
    for (const m of messages) {
      if (this.stopped) break;
      const result = await rereadMessage(this.deps, m, v.operator, rules, "retired");
      if (result !== "unchanged") changed += 1;
      if (result === "confirmed") confirmed += 1;
    }
    await advanceReread(db.em(), v.id, { messages: changed, confirmed, done: false });
    return changed;
  }

  private async activatedBatch(v: WordingRuleRecord, now: Date): Promise<number> {
    const { db } = this.deps;
    const until = new Date(v.activated_at!.getTime() + this.options.marginMs);
    const batch = await rereadableAfter(db.em(), v.id, this.options.marginMs, this.options.batchSize ?? 100);
    if (batch.length === 0) {
      if (now.getTime() > until.getTime())
        await advanceReread(db.em(), v.id, { messages: 0, confirmed: 0, done: true });
      return 0;
    }
    const operators = await simOperators(
      this.deps,
      batch.map((m) => m.sim_id),
    );
    const rules = await taughtRules(db.em(), v.operator);
    let changed = 0;
    let confirmed = 0;
    for (const m of batch) {
      if (this.stopped) return changed;
      if (operators.get(m.sim_id) !== v.operator) continue;
      const result = await rereadMessage(this.deps, m, v.operator, rules, "activated");
      if (result !== "unchanged") changed += 1;
      if (result === "confirmed") confirmed += 1;
    }
    const last = batch[batch.length - 1];
    await advanceReread(db.em(), v.id, {
      afterMessageId: last.id,
      messages: changed,
      confirmed,
      done: false,
    });
    return changed;
  }
}

/**
 * Reads one message again with the operator's active rules. After an activation only a
 * reading by a taught rule other than the one stored changes it; after a retirement the
 * remaining rules' reading replaces the retired version's, whatever it is. It is recorded under
 * the SIM's lock (a message that confirmed, was attached or dismissed meanwhile, or was read
 * again already, is left alone) and followed as a new message's reading is (`readingRecorded`:
 * its chain, and its day's counts and reported balance), then a message that can now prove
 * something is correlated, and a proof's balance goes to fleet (`finish`).
 */
export async function rereadMessage(
  deps: FlowDeps,
  m: MessageRecord,
  operator: Operator,
  rules: readonly Rule[],
  scope: RereadScope,
): Promise<"unchanged" | "changed" | "confirmed"> {
  const after = parseMessage(operator, m.raw_text, rules);
  if (after.rule === m.parse_rule) return "unchanged";
  if (scope === "activated" && !after.rule?.startsWith("taught.")) return "unchanged";
  const updated = await deps.db.tx(async (em) => {
    const locked = await lockSimMessage(em, m.sim_id, m.id);
    if (!locked || locked.parse_rule !== m.parse_rule) return undefined;
    const route = routeOf(after.kind, locked.outcome !== "not_correlated", after.rule, true);
    const outcome = initialOutcome(route);
    const read = await recordReading(
      em,
      m.id,
      {
        kind: after.kind,
        amount: after.amount,
        fee: after.fee,
        commission: after.commission,
        balance_after: after.balance_after,
        operator_ref: after.operator_ref,
        counterparty_msisdn: after.counterparty_msisdn,
        counterparty_name: after.counterparty_name,
        direction: after.direction,
        language: after.language,
        parse_rule: after.rule,
        state: outcome === "pending" ? "pending" : "done",
        outcome,
      },
      scope,
    );
    if (!read) return undefined;
    await readingRecorded(em, locked, read);
    return read;
  });
  if (!updated) return "unchanged";
  deps.published();
  const final = await finish(deps, updated);
  return final.outcome === "confirmed" ? "confirmed" : "changed";
}
