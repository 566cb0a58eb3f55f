// When an operator changes its wording, its new texts stop being recognised: the share of a
// SIM's texts that no rule recognises jumps. A jump over the last hour against the SIM's usual
// level raises an alert with a sample, so a person can teach the new wording before the
// orphans pile up.

export interface TextCounts {
  texts: number;
  unrecognised: number;
}

/** Fewer texts than this in the last hour say nothing about a wording. */
export const MIN_TEXTS_LAST_HOUR = 5;
/** Unrecognised texts needed in the last hour, whatever the share. */
export const MIN_UNRECOGNISED_LAST_HOUR = 3;

export interface WordingDrift {
  jump: boolean;
  /** Share of unrecognised texts over the last hour (0..1). */
  share: number;
  /** Share over the usual period before it (0 when the SIM has no history). */
  usual_share: number;
}

/**
 * A jump: enough texts in the last hour, and an unrecognised share at least twice the usual
 * one and 25 points above it (a SIM that always receives some notices nobody wrote a rule for
 * does not alert every hour).
 */
export function wordingDrift(lastHour: TextCounts, usual: TextCounts): WordingDrift {
  const share = lastHour.texts === 0 ? 0 : lastHour.unrecognised / lastHour.texts;
  const usualShare = usual.texts === 0 ? 0 : usual.unrecognised / usual.texts;
  const jump =
    lastHour.texts >= MIN_TEXTS_LAST_HOUR &&
    lastHour.unrecognised >= MIN_UNRECOGNISED_LAST_HOUR &&
    share >= 2 * usualShare &&
    share >= usualShare + 0.25;
  return { jump, share, usual_share: usualShare };
}
