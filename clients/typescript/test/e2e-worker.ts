// The worker of the end-to-end test (test/clients/clients-e2e.test.ts): a call's metrics, typed as
// @livekit/agents' own, through the forwarder to a callmeter server. The test runs it from the npm project
// the installed @callmeter/client is in (test/support/client-packages-setup.ts copies it there).
//   node --import tsx e2e-worker.ts --base-url URL --user-id U --room R --count N --ledger PATH [--timeout-ms MS]
// Prints {"session_id"} first and {"recorded","rejected"} last; the ledger gets one JSON line per
// distinct usage event (the body as sent, less its ids and time).
import { createWriteStream } from 'node:fs';
import { parseArgs } from 'node:util';
import type { metrics } from '@livekit/agents';
import { Callmeter, usageBody, type RecordFields } from '@callmeter/client';
import { UsageForwarder } from '@callmeter/client/livekit';

const { values } = parseArgs({
  options: {
    'base-url': { type: 'string' },
    'user-id': { type: 'string' },
    room: { type: 'string' },
    count: { type: 'string' },
    ledger: { type: 'string' },
    'timeout-ms': { type: 'string', default: '3000' },
  },
});
const userId = values['user-id']!;
const ledger = createWriteStream(values.ledger!);
const client = new Callmeter({
  baseUrl: values['base-url']!,
  timeoutMs: Number(values['timeout-ms']),
  batchSize: 100,
  flushIntervalMs: 100,
  // The server is down for seconds at each restart: a short cap resumes soon after it is back.
  backoffBaseMs: 50,
  backoffCapMs: 500,
  sessionAttempts: 60,
});
const ids = new Set<string>();
const LEDGER_DROPS = new Set(['event_id', 'session_id', 'user_id', 'timestamp', 'agent_id']);
const recording = {
  record(fields: RecordFields): string {
    const id = client.record(fields);
    if (!ids.has(id)) {
      ids.add(id);
      const body = Object.fromEntries(Object.entries(usageBody(fields)).filter(([k]) => !LEDGER_DROPS.has(k)));
      ledger.write(`${JSON.stringify(body)}\n`);
    }
    return id;
  },
};

function metric(i: number, now: number): metrics.AgentMetrics {
  const common = { label: 'e2e', requestId: `req-${i}`, timestamp: now + i, durationMs: 500 };
  switch (i % 4) {
    case 0:
      return {
        ...common,
        type: 'llm_metrics',
        ttftMs: 200,
        cancelled: false,
        promptTokens: 100 + (i % 50),
        promptCachedTokens: (i % 5) * 10,
        completionTokens: 20 + (i % 30),
        totalTokens: 120 + (i % 50) + (i % 30),
        tokensPerSecond: 40,
        speechId: `speech-${i}`,
        metadata: { modelName: 'gpt-4o-mini', modelProvider: 'openai' },
      };
    case 1:
      return {
        ...common,
        type: 'stt_metrics',
        audioDurationMs: 1500 + (i % 7) * 250,
        streamed: true,
        metadata: { modelName: 'nova-3', modelProvider: 'Deepgram' },
      };
    case 2:
      return {
        ...common,
        type: 'tts_metrics',
        ttfbMs: 100,
        audioDurationMs: 2000,
        cancelled: false,
        charactersCount: 40 + (i % 60),
        streamed: true,
        speechId: `speech-${i}`,
        metadata: { modelName: 'sonic-3', modelProvider: 'Cartesia' },
      };
    default:
      return {
        ...common,
        type: 'realtime_model_metrics',
        ttftMs: 300,
        cancelled: false,
        inputTokens: 200 + (i % 40),
        outputTokens: 80,
        totalTokens: 280 + (i % 40),
        tokensPerSecond: 30,
        inputTokenDetails: {
          audioTokens: 150,
          textTokens: 50 + (i % 40),
          imageTokens: 0,
          cachedTokens: 20,
          cachedTokensDetails: { audioTokens: 10, textTokens: 10, imageTokens: 0 },
        },
        outputTokenDetails: { textTokens: 20, audioTokens: 60, imageTokens: 0 },
        metadata: { modelName: 'gpt-4o-realtime-preview', modelProvider: 'openai' },
      };
  }
}

const session = await client.startSession({ roomName: values.room!, userId });
process.stdout.write(`${JSON.stringify({ session_id: session.id })}\n`);
const forwarder = new UsageForwarder(recording, { sessionId: session.id, userId });
const now = Date.now() - 60_000;
for (let i = 0; i < Number(values.count); i += 1) {
  const item = metric(i, now);
  forwarder.onMetrics(item);
  if (i % 10 === 0) forwarder.onMetrics(item); // the same metric again: one event
  // Let the sender run between metrics, as a worker's event loop would.
  if (i % 100 === 99) await new Promise((resolve) => setImmediate(resolve));
}
const complete = await client.close(600_000);
await new Promise<void>((resolve) => ledger.end(resolve));
process.stdout.write(`${JSON.stringify({ recorded: ids.size, rejected: client.rejectedCount })}\n`);
process.exit(complete ? 0 : 1);
