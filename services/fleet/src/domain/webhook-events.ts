// The events a webhook can subscribe to (the contract's public events). Browser-safe, no
// imports: the board offers this list as it is (gateway/board/src/pages/Webhooks.tsx).
export const WEBHOOK_EVENTS = ["operation.confirmed", "operation.failed", "alert.raised"] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];
