/**
 * With CALLMETER_TEST_AUTH=on (test/integration/with-credentials.test.ts sets it), the API tests run
 * against processes in AUTH_MODE=on and send an admin credential on every request: the same tests,
 * the same assertions, through the credential checks.
 */
const TEST_ADMIN_KEY = 'test-admin-key-of-the-api-tests-0123456789';

function testAuthOn(): boolean {
  return process.env.CALLMETER_TEST_AUTH === 'on';
}

/** What a process started by a test adds to its environment. */
export function testAuthEnv(): Record<string, string> {
  return testAuthOn() ? { AUTH_MODE: 'on', ADMIN_API_KEY: TEST_ADMIN_KEY } : {};
}

/** What a request of a test adds to its headers. */
export function testAuthHeaders(): Record<string, string> {
  return testAuthOn() ? { authorization: `Bearer ${TEST_ADMIN_KEY}` } : {};
}
