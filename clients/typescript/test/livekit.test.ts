import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { inference, initializeLogger, llm as lkllm, voice, type metrics } from '@livekit/agents';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Callmeter } from '@callmeter/client';
import { EMITS_USAGE, UsageForwarder, runOf } from '@callmeter/client/livekit';
import { BatchServer } from './batch-server.ts';
import { makeLlmMetric } from './llm-metrics.ts';

const CALL = { sessionId: 'session-1', userId: 'user-1', agentId: 'agent-1' };
const quiet = { warn: () => undefined, error: () => undefined };
const IDS = ['event_id', 'session_id', 'user_id', 'agent_id', 'timestamp'];
const strip = (body: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(body).filter(([k]) => !IDS.includes(k)));

const realtime: metrics.RealtimeModelMetrics = {
  type: 'realtime_model_metrics',
  label: 'openai.realtime',
  requestId: 'rt-1',
  timestamp: 1_800_000_000_000,
  durationMs: 1000,
  sessionDurationMs: 30_000,
  ttftMs: 200,
  cancelled: false,
  inputTokens: 300,
  outputTokens: 90,
  totalTokens: 390,
  tokensPerSecond: 20,
  inputTokenDetails: {
    audioTokens: 200,
    textTokens: 80,
    imageTokens: 20,
    cachedTokens: 40,
    cachedTokensDetails: { audioTokens: 30, textTokens: 5, imageTokens: 5 },
  },
  outputTokenDetails: { textTokens: 15, audioTokens: 75, imageTokens: 0 },
  metadata: { modelName: 'gpt-4o-realtime-preview', modelProvider: 'openai' },
};
const stt: metrics.STTMetrics = {
  type: 'stt_metrics',
  label: 'openai.STT',
  requestId: 'stt-1',
  timestamp: 1_800_000_000_000,
  durationMs: 0,
  audioDurationMs: 12_300,
  inputTokens: 90,
  outputTokens: 25,
  streamed: true,
  metadata: { modelName: 'gpt-4o-transcribe', modelProvider: 'OpenAI' },
};
const tts: metrics.TTSMetrics = {
  type: 'tts_metrics',
  label: 'cartesia.TTS',
  requestId: 'tts-1',
  timestamp: 1_800_000_000_000,
  ttfbMs: 100,
  durationMs: 500,
  audioDurationMs: 3000,
  cancelled: false,
  charactersCount: 57,
  streamed: true,
  metadata: { modelName: 'sonic-3', modelProvider: 'Cartesia' },
};

let server: BatchServer;
let meter: Callmeter;
beforeAll(() => initializeLogger({ pretty: false, level: 'error' }));
beforeEach(async () => {
  server = new BatchServer();
  meter = new Callmeter({ baseUrl: await server.start(), flushIntervalMs: 60_000, logger: quiet });
});
afterEach(async () => {
  await meter.close(1000);
  await server.stop();
});

/** What the session's activity does with each metric: LiveKit's totals, then `session_usage_updated`. */
function collected(session: voice.AgentSession, metric: metrics.AgentMetrics): void {
  session._usageCollector.collect(metric);
  session.emit(
    voice.AgentSessionEventTypes.SessionUsageUpdated,
    voice.createSessionUsageUpdatedEvent({ usage: session.usage }),
  );
}

const REALTIME_BODY = {
  provider: 'openai',
  event_type: 'llm_tokens',
  model: 'gpt-4o-realtime-preview',
  quantity: 390,
  input_tokens: 300,
  output_tokens: 90,
  cached_input_tokens: 40,
  audio_input_tokens: 200,
  cached_audio_input_tokens: 30,
  image_input_tokens: 20,
  cached_image_input_tokens: 5,
  audio_output_tokens: 75,
  session_duration_seconds: 30,
  usage_data: { text_input_tokens: 80, cached_text_input_tokens: 5, text_output_tokens: 15 },
};
const STT_BODY = {
  provider: 'openai',
  event_type: 'stt_minutes',
  model: 'gpt-4o-transcribe',
  input_tokens: 90,
  output_tokens: 25,
  audio_input_tokens: 90,
  usage_data: { audio_duration_seconds: '12.3' },
};
const TTS_BODY = {
  provider: 'cartesia',
  event_type: 'tts_characters',
  model: 'sonic-3',
  quantity: 57,
  usage_data: { audio_duration_seconds: 3 },
};

describe('the LiveKit forwarder with @livekit/agents', () => {
  it('forwards a real AgentSession’s session_usage_updated as the growth of each total, every counter carried', async () => {
    expect(EMITS_USAGE).toBe(true);
    const session = new voice.AgentSession({});
    const forwarder = new UsageForwarder(meter, CALL);
    const detach = forwarder.attach(session);
    // Subscribed to the running totals only, never to the metrics event.
    expect(session.listenerCount(voice.AgentSessionEventTypes.MetricsCollected)).toBe(0);
    for (const metric of [realtime, stt, tts, realtime]) collected(session, metric);
    await meter.flush();
    const bodies = server.batches.flat();
    expect(bodies.map(strip)).toEqual([REALTIME_BODY, STT_BODY, TTS_BODY, REALTIME_BODY]);
    expect(new Set(bodies.map((b) => b.agent_id))).toEqual(new Set(['agent-1']));
    expect(forwarder.compareTotals(session)).toBe(true);
    detach();
  });

  it('sends the same ids for a replayed snapshot, which the server counts once, and nothing for an older one', async () => {
    const session = new voice.AgentSession({});
    const snapshots: voice.SessionUsageUpdatedEvent[] = [];
    session.on(voice.AgentSessionEventTypes.SessionUsageUpdated, (event) => snapshots.push(event));
    const first = new UsageForwarder(meter, CALL);
    first.attach(session);
    for (const metric of [makeLlmMetric(1), stt, makeLlmMetric(2)]) collected(session, metric);
    await meter.flush();
    const stored = new Map(server.stored);
    expect(stored.size).toBe(3);
    // A worker started again on the call, replaying the run's snapshots, each twice.
    const second = new UsageForwarder(meter, CALL);
    const run = runOf(session);
    const replayed = snapshots.flatMap((event) => {
      const ids = second.onUsage(event.usage, { run, timestamp: event.createdAt });
      expect(second.onUsage(event.usage, { run })).toEqual([]);
      return ids;
    });
    expect(new Set(replayed)).toEqual(new Set(stored.keys()));
    expect(second.onUsage(snapshots[0]!.usage, { run })).toEqual([]);
    await meter.flush();
    expect(server.batches.flat()).toHaveLength(6);
    expect(server.stored).toEqual(stored);
  });

  it('bills the model a real FallbackAdapter served, not the one that failed', async () => {
    const gateway = await chatGateway(new Set(['openai/gpt-4.1-mini']));
    try {
      const models = ['openai/gpt-4.1-mini', 'openai/gpt-4o-mini'].map(
        (model) =>
          new inference.LLM({ model, baseURL: gateway.url, apiKey: 'devkey', apiSecret: 'a-secret-0123456789' }),
      );
      const adapter = new lkllm.FallbackAdapter({ llms: models, attemptTimeout: 10, retryInterval: 0.1 });
      const session = new voice.AgentSession({});
      const forwarder = new UsageForwarder(meter, CALL);
      forwarder.attach(session);
      adapter.on('metrics_collected', (metric: metrics.AgentMetrics) => collected(session, metric));
      const chatCtx = lkllm.ChatContext.empty();
      chatCtx.addMessage({ role: 'user', content: 'what is the weather in paris' });
      const stream = adapter.chat({ chatCtx });
      for await (const chunk of stream) void chunk;
      await new Promise((resolve) => setTimeout(resolve, 50)); // the stream's metrics follow its last chunk
      // The primary failed (and failed again when probed for recovery); the backup served once.
      expect(gateway.completions.filter((model) => model === 'openai/gpt-4o-mini')).toHaveLength(1);
      expect(gateway.completions).toContain('openai/gpt-4.1-mini');
      await meter.flush();
      expect(server.batches.flat().map(strip)).toEqual([
        {
          provider: 'livekit',
          event_type: 'llm_tokens',
          model: 'openai/gpt-4o-mini',
          quantity: 1242,
          input_tokens: 1200,
          output_tokens: 42,
          cached_input_tokens: 1024,
        },
      ]);
      // LiveKit's own totals count the request twice (the adapter's stream reports it under the adapter's
      // name too) and list the failed model with nothing; the forwarder bills the served model once.
      const byModel = new Map(session.usage.modelUsage.map((usage) => [usage.model, usage]));
      expect(byModel.get('FallbackAdapter')).toMatchObject({ inputTokens: 1200, outputTokens: 42 });
      expect(byModel.get('openai/gpt-4o-mini')).toMatchObject({ inputTokens: 1200, outputTokens: 42 });
      expect(Object.keys(byModel.get('openai/gpt-4.1-mini') ?? {}).sort()).toEqual(['model', 'provider', 'type']);
      expect(forwarder.compareTotals(session)).toBe(true);
      await adapter.aclose();
    } finally {
      await gateway.stop();
    }
  });

  it('falls back to metrics_collected where the running totals are not emitted: one event per metric', async () => {
    const forwarder = new UsageForwarder(meter, CALL);
    for (const metric of [makeLlmMetric(), realtime, stt, tts]) expect(forwarder.onMetrics(metric)).not.toBeNull();
    const vad: metrics.VADMetrics = {
      type: 'vad_metrics',
      label: 'silero',
      timestamp: 1,
      idleTimeMs: 1,
      inferenceDurationTotalMs: 1,
      inferenceCount: 3,
    };
    expect(forwarder.onMetrics(vad)).toBeNull();
    expect(forwarder.onMetrics(makeLlmMetric(7))).toBe(forwarder.onMetrics(makeLlmMetric(7)));
    await meter.flush();
    const bodies = server.batches.flat();
    expect(bodies.slice(0, 4).map(strip)).toEqual([
      {
        provider: 'openai',
        event_type: 'llm_tokens',
        model: 'gpt-4o-mini',
        quantity: 150,
        input_tokens: 120,
        cached_input_tokens: 64,
        output_tokens: 30,
      },
      REALTIME_BODY,
      STT_BODY,
      TTS_BODY,
    ]);
    expect(bodies[0]!.timestamp).toBe('2027-01-15T08:00:00.001Z');
    expect(server.stored.size).toBe(5);
  });
});

/** OpenAI's streamed chat completions as LiveKit Inference serves them, on 127.0.0.1; some models fail with a 500. */
async function chatGateway(failing: ReadonlySet<string>) {
  const completions: string[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const { model } = JSON.parse(Buffer.concat(chunks).toString()) as { model: string };
      completions.push(model);
      if (failing.has(model)) {
        response.writeHead(500, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ error: { message: 'upstream unavailable', type: 'server_error' } }));
        return;
      }
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      const send = (choices: unknown[], usage: unknown = null) =>
        response.write(
          `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 0, model, choices, usage })}\n\n`,
        );
      send([{ index: 0, delta: { role: 'assistant', content: 'It is sunny.' }, finish_reason: null }]);
      send([{ index: 0, delta: {}, finish_reason: 'stop' }]);
      send([], {
        prompt_tokens: 1200,
        completion_tokens: 42,
        total_tokens: 1242,
        prompt_tokens_details: { cached_tokens: 1024 },
      });
      response.end('data: [DONE]\n\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    completions,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
