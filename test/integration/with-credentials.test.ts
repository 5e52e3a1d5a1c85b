// The API tests again, unchanged, against processes in AUTH_MODE=on with an admin credential on
// every request (test/support/test-auth.ts): credentials change who may call, never an answer.
// The golden compat test (voxarena-contract) is among them; in its own file it runs with AUTH_MODE=off.
process.env.CALLMETER_TEST_AUTH = 'on';

await import('./sessions-api.test.ts');
await import('./agents-api.test.ts');
await import('./telephony-api.test.ts');
await import('./usage-batch.test.ts');
await import('./cost-summary.test.ts');
await import('./voxarena-contract.test.ts');

const { describe, expect, it } = await import('vitest');
const { startCallmeter } = await import('../support/callmeter-process.ts');
const { isolate } = await import('../support/harness.ts');

describe('the API tests with credentials', () => {
  it('run against processes that refuse a request without one', async () => {
    const app = await startCallmeter({ DATA_DIR: isolate('with-credentials').dataDir, LOG_LEVEL: 'warn' });
    try {
      const bare = await fetch(`${app.url}/api/sessions/`, { headers: { 'x-user-id': 'tenant-1' } });
      expect([bare.status, await bare.text()]).toEqual([401, '{"detail":"Not authenticated"}']);
    } finally {
      await app.stop();
    }
  });
});
