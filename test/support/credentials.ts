// The credentials the test systems run with (no vitest import: the image smoke and the
// benchmark use them outside the test runner).
export const TEST_API_KEY = "test-api-key-0123456789";
export const TEST_BOOTSTRAP_TOKEN = "test-bootstrap-token-0123456789";
