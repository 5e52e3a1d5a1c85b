import { initializeLogger, voice, type metrics } from '@livekit/agents';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Callmeter } from '@callmeter/client';
import { UsageForwarder } from '@callmeter/client/livekit';
import { BatchServer } from './batch-server.ts';

const CALL = { sessionId: 'session-1', userId: 'user-1', agentId: 'agent-1' };
const quiet = { warn: () => undefined, error: () => undefined };

const llm = (i = 1): metrics.LLMMetrics => ({
  type: 'llm_metrics',
  label: 'openai.LLM',
  requestId: `req-${i}`,
  timestamp: 1_800_000_000_000 + i,
  durationMs: 400,
  ttftMs: 100,
  cancelled: false,
  completionTokens: 30,
  promptTokens: 120,
  promptCachedTokens: 64,
  totalTokens: 150,
  tokensPerSecond: 50,
  metadata: { modelName: 'gpt-4o-mini', modelProvider: 'openai' },
});
const realtime: metrics.RealtimeModelMetrics = {
  type: 'realtime_model_metrics',
  label: 'openai.realtime',
  requestId: 'rt-1',
  timestamp: 1_800_000_000_000,
  durationMs: 1000,
  ttftMs: 200,
  cancelled: false,
  inputTokens: 300,
  outputTokens: 90,
  totalTokens: 390,
  tokensPerSecond: 20,
  inputTokenDetails: {
    audioTokens: 200,
    textTokens: 100,
    imageTokens: 0,
    cachedTokens: 40,
    cachedTokensDetails: { audioTokens: 30, textTokens: 10, imageTokens: 0 },
  },
  outputTokenDetails: { textTokens: 15, audioTokens: 75, imageTokens: 0 },
  metadata: { modelName: 'gpt-4o-realtime-preview', modelProvider: 'openai' },
};
const stt: metrics.STTMetrics = {
  type: 'stt_metrics',
  label: 'deepgram.STT',
  requestId: 'stt-1',
  timestamp: 1_800_000_000_000,
  durationMs: 0,
  audioDurationMs: 12_300,
  streamed: true,
  metadata: { modelName: 'nova-3', modelProvider: 'Deepgram' },
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

const strip = (body: Record<string, unknown>) =>
  Object.fromEntries(
    Object.entries(body).filter(([k]) => !['event_id', 'session_id', 'user_id', 'agent_id', 'timestamp'].includes(k)),
  );

describe('the LiveKit forwarder with @livekit/agents', () => {
  it('turns each metric kind into its usage event with its token kinds, and skips VAD', async () => {
    const forwarder = new UsageForwarder(meter, CALL);
    for (const metric of [llm(), realtime, stt, tts]) expect(forwarder.onMetrics(metric)).not.toBeNull();
    const vad: metrics.VADMetrics = {
      type: 'vad_metrics',
      label: 'silero',
      timestamp: 1,
      idleTimeMs: 1,
      inferenceDurationTotalMs: 1,
      inferenceCount: 3,
    };
    expect(forwarder.onMetrics(vad)).toBeNull();
    await meter.flush();
    const bodies = server.batches.flat();
    expect(bodies.map(strip)).toEqual([
      {
        provider: 'openai',
        event_type: 'llm_tokens',
        model: 'gpt-4o-mini',
        quantity: 150,
        input_tokens: 120,
        cached_input_tokens: 64,
        output_tokens: 30,
      },
      {
        provider: 'openai',
        event_type: 'llm_tokens',
        model: 'gpt-4o-realtime-preview',
        quantity: 390,
        input_tokens: 300,
        cached_input_tokens: 40,
        audio_input_tokens: 200,
        cached_audio_input_tokens: 30,
        output_tokens: 90,
        audio_output_tokens: 75,
      },
      {
        provider: 'deepgram',
        event_type: 'stt_minutes',
        model: 'nova-3',
        usage_data: { audio_duration_seconds: '12.3' },
      },
      { provider: 'cartesia', event_type: 'tts_characters', model: 'sonic-3', quantity: 57 },
    ]);
    expect(new Set(bodies.map((b) => b.agent_id))).toEqual(new Set(['agent-1']));
    expect(bodies[0]!.timestamp).toBe('2027-01-15T08:00:00.001Z');
  });

  it('records the same metric twice as one event', async () => {
    const forwarder = new UsageForwarder(meter, CALL);
    const metric = llm(7);
    expect(forwarder.onMetrics(metric)).toBe(forwarder.onMetrics(metric));
    expect(forwarder.onMetrics(llm(8))).not.toBe(forwarder.onMetrics(metric));
    await meter.flush();
    expect(server.stored.size).toBe(2);
  });

  it('forwards a real AgentSession’s metrics_collected events and compares LiveKit’s own totals', async () => {
    const session = new voice.AgentSession({});
    const warnings: string[] = [];
    const forwarder = new UsageForwarder(meter, CALL, {
      warn: (m) => warnings.push(m),
      error: (m) => warnings.push(m),
    });
    const detach = forwarder.attach(session);
    // What the session's activity does with each metric: LiveKit's usage totals, then the event.
    const emitted = (metric: metrics.AgentMetrics) => {
      session._usageCollector.collect(metric);
      session.emit(
        voice.AgentSessionEventTypes.MetricsCollected,
        voice.createMetricsCollectedEvent({ metrics: metric }),
      );
    };
    for (const metric of [llm(), stt, tts]) emitted(metric);
    await meter.flush();
    expect(server.stored.size).toBe(3);
    expect(forwarder.compareTotals(session)).toBe(true);
    // LiveKit counts a metric emitted twice twice; callmeter once, and says so.
    emitted(llm());
    expect(forwarder.compareTotals(session)).toBe(false);
    expect(warnings).toEqual([expect.stringMatching(/usage totals differ .*llm_usage\|openai\|gpt-4o-mini/)]);
    detach();
    emitted(llm(9));
    await meter.flush();
    expect(server.stored.size).toBe(3);
  });
});
