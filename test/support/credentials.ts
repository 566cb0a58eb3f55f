/** The test system's API key and bootstrap token (startTestSystem configures the services with them). */
export const TEST_API_KEY = "test-api-key-0123456789";
export const TEST_BOOTSTRAP_TOKEN = "test-bootstrap-token-0123456789";
