import { raiseAlert, type EntityManager } from "@transferops/kit";
import type { MessageRecord } from "../domain/message.ts";
import type { Operator } from "../domain/parsers/types.ts";
import type { WordingDrift } from "../domain/wording-drift.ts";

const SCHEMA = "evidence";
/** The sample's length: enough to write a wording rule from, short enough for a notification. */
const SAMPLE_CHARS = 320;

/**
 * The operator's texts on this SIM stopped being recognised: probably a new wording. One alert
 * per SIM and hour; the sample is the text that tipped it.
 */
export async function wordingChangedAlert(
  em: EntityManager,
  m: MessageRecord,
  operator: Operator,
  drift: WordingDrift,
): Promise<void> {
  const pct = (x: number) => Math.round(x * 1000) / 10;
  await raiseAlert(em, SCHEMA, {
    kind: "evidence_wording_changed",
    severity: "warning",
    message:
      `${pct(drift.share)}% of SIM ${m.sim_id}'s ${operator} texts over the last hour were recognised by no ` +
      `wording rule (usually ${pct(drift.usual_share)}%): the operator may have changed its wording`,
    sim_id: m.sim_id,
    context: {
      operator,
      share_pct: pct(drift.share),
      usual_share_pct: pct(drift.usual_share),
      sample_message_id: m.id,
      sample: m.raw_text.slice(0, SAMPLE_CHARS),
    },
    raised_at: new Date(),
    dedupe_key: `evidence_wording_changed:${m.sim_id}:${m.received_at.toISOString().slice(0, 13)}`,
  });
}
