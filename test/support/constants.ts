// Values the tests share (no vitest import: the journey of the image smoke uses them outside the test runner).

/** A well-formed UUID that names nothing: the agent, SIM or operation that does not exist. */
export const UNKNOWN_ID = "00000000-0000-4000-8000-000000000000";

/** A well-formed device id (32 hex digits) that no handset has. */
export const UNKNOWN_DEVICE_ID = "0123456789abcdef0123456789abcdef";

/** The PIN the tests give the SIMs they create, and the simulated operator expects. */
export const TEST_PIN = "73915046";

/**
 * Fleet's egress settings for tests whose webhooks go to a receiver on this machine: http
 * allowed and loopback listed explicitly (by default only https to outside addresses).
 */
export const LOCAL_WEBHOOKS = { WEBHOOK_ALLOW_HTTP: "true", WEBHOOK_ALLOWED_ADDRESSES: "127.0.0.1" };
