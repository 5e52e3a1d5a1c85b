// The TypeScript worker of the refusals end-to-end test (test/clients/client-refusals-e2e.test.ts):
// records usage into one session through a spool, waits up to --wait-ms for the server to answer for
// it, and prints what the client kept, sent and refused, as the Python e2e_spool_worker.py does. The test
// runs it from the npm project the installed @callmeter/client is in (test/support/client-packages-setup.ts).
//   node --import tsx e2e-spool-worker.ts --base-url URL --api-key KEY --spool-dir DIR --session-id S
//        --user-id U [--count N] [--key-prefix P] [--wait-ms MS]
import { parseArgs } from 'node:util';
import { Callmeter } from '@callmeter/client';

const { values } = parseArgs({
  options: {
    'base-url': { type: 'string' },
    'api-key': { type: 'string' },
    'spool-dir': { type: 'string' },
    'session-id': { type: 'string' },
    'user-id': { type: 'string' },
    count: { type: 'string', default: '0' },
    'key-prefix': { type: 'string', default: 'k' },
    'wait-ms': { type: 'string', default: '30000' },
  },
});
const authErrors: number[] = [];
const rejected: string[] = [];
const client = new Callmeter({
  baseUrl: values['base-url']!,
  apiKey: values['api-key']!,
  spoolDir: values['spool-dir']!,
  batchSize: 100,
  flushIntervalMs: 200,
  backoffBaseMs: 50,
  backoffCapMs: 1000,
  authBackoffCapMs: 1000,
  onAuthError: (error) => authErrors.push(error.status),
  onRejected: (refused) => rejected.push(refused.body.event_id),
});
for (let i = 0; i < Number(values.count); i += 1)
  client.record({
    sessionId: values['session-id']!,
    userId: values['user-id']!,
    provider: 'deepgram',
    eventType: 'stt_minutes',
    model: 'nova-3',
    key: `${values['key-prefix']}${i}`,
    usageData: { audio_duration_seconds: 90 },
  });
let timer: NodeJS.Timeout | undefined;
const flushed = await Promise.race([
  client.flush().then(() => true),
  new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), Number(values['wait-ms'])))),
]);
clearTimeout(timer);
const stats = { ...client.stats(), deadLetters: await client.deadLetterCount() };
await client.close(500);
process.stdout.write(`${JSON.stringify({ flushed, stats, authErrors, rejected })}\n`);
