import type { metrics } from '@livekit/agents';

/**
 * LiveKit's metrics of one LLM request (120 prompt tokens, 64 of them cached, 30 completion tokens), as
 * the client's tests feed them to the forwarder: request `i` of `model`, with any field replaced.
 */
export const makeLlmMetric = (
  i = 1,
  model = 'gpt-4o-mini',
  overrides: Partial<metrics.LLMMetrics> = {},
): metrics.LLMMetrics => ({
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
  metadata: { modelName: model, modelProvider: 'openai' },
  ...overrides,
});
