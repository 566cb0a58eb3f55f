import type { EntityManager } from "@transferops/kit";
import type { TextCounts } from "../domain/wording-drift.ts";

/** How far back the usual level of a SIM is measured, before the last hour. */
export const USUAL_PERIOD_DAYS = 7;

/**
 * The SIM's operator texts (an unknown sender's are not the operator's wording) over the hour
 * before `now`, and over the usual period before that hour; unrecognised: parsed by no rule.
 */
export async function unrecognisedCounts(
  em: EntityManager,
  simId: string,
  now: Date,
  unrecognisedRule: string,
): Promise<{ lastHour: TextCounts; usual: TextCounts }> {
  const hourAgo = new Date(now.getTime() - 3_600_000);
  const usualFrom = new Date(hourAgo.getTime() - USUAL_PERIOD_DAYS * 86_400_000);
  const [row] = (await em.execute(
    `select
       count(*) filter (where received_at > ?) as texts,
       count(*) filter (where received_at > ? and parse_rule = ?) as unrecognised,
       count(*) filter (where received_at <= ?) as usual_texts,
       count(*) filter (where received_at <= ? and parse_rule = ?) as usual_unrecognised
     from evidence.messages
     where sim_id = ? and received_at > ? and received_at <= ? and outcome <> 'unknown_sender'`,
    [hourAgo, hourAgo, unrecognisedRule, hourAgo, hourAgo, unrecognisedRule, simId, usualFrom, now],
  )) as Record<string, string | number>[];
  return {
    lastHour: { texts: Number(row.texts), unrecognised: Number(row.unrecognised) },
    usual: { texts: Number(row.usual_texts), unrecognised: Number(row.usual_unrecognised) },
  };
}
