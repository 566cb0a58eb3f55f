// Why a person dismissed an unmatched message. Browser-safe, no imports: the board offers
// this list as it is (gateway/board/src/pages/Messages.tsx).
export const DISMISS_REASONS = ["balance_reading", "operator_refusal", "already_settled", "not_ours", "other"] as const;
export type DismissReason = (typeof DISMISS_REASONS)[number];
