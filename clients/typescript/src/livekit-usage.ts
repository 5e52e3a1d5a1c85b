import type { metrics } from '@livekit/agents';
import { plain, shiftDecimal } from './records.ts';

/** LiveKit's counters of one usage, each an exact decimal string (durations in seconds). */
export type Counters = Record<string, string>;

export interface EventFields {
  readonly eventType: string;
  readonly quantities: Record<string, string>;
  readonly usageData?: Record<string, string>;
}

/** The kinds callmeter bills; LiveKit's interruption and end-of-turn request counts are not usage of a vendor. */
const BILLED_KINDS = new Set(['llm_usage', 'tts_usage', 'stt_usage']);

// LLMModelUsage's counters -> the wire's (docs/clients-livekit.md; every kind is part of input or output).
const LLM_FIELDS: Record<string, string> = {
  inputCachedTokens: 'cached_input_tokens',
  inputCacheCreationTokens: 'cache_write_tokens',
  inputAudioTokens: 'audio_input_tokens',
  inputCachedAudioTokens: 'cached_audio_input_tokens',
  inputImageTokens: 'image_input_tokens',
  inputCachedImageTokens: 'cached_image_input_tokens',
  outputAudioTokens: 'audio_output_tokens',
  sessionDuration: 'session_duration_seconds',
};
// The text parts are the remainder of their whole: carried in usage_data, not priced apart.
const LLM_TEXT_FIELDS: Record<string, string> = {
  inputTextTokens: 'text_input_tokens',
  inputCachedTextTokens: 'cached_text_input_tokens',
  outputTextTokens: 'text_output_tokens',
};

/** A counter as LiveKit holds it, exactly: the shortest decimal that reads back as the number; ms become seconds. */
function counter(name: string, value: number): [string, string] {
  const text = plain(String(value));
  return name.endsWith('Ms') ? [name.slice(0, -2), shiftDecimal(text, -3)] : [name, text];
}

/**
 * The name @livekit/agents gives a FallbackAdapter's own requests: their metrics repeat those of the
 * instance that served (which the adapter passes on too), so LiveKit's totals count them twice.
 */
export const FALLBACK_ADAPTER = 'FallbackAdapter';

/**
 * [kind, provider, model, counters] of a LiveKit ModelUsage (its zero counters may be left out), or null
 * for a kind callmeter does not bill and for a FallbackAdapter's second count.
 */
export function countersOf(usage: Partial<metrics.ModelUsage>): [string, string, string, Counters] | null {
  const { type, provider, model, ...rest } = usage as Record<string, unknown>;
  if (typeof type !== 'string' || !BILLED_KINDS.has(type) || model === FALLBACK_ADAPTER) return null;
  const counters: Counters = {};
  for (const [name, value] of Object.entries(rest))
    if (typeof value === 'number') {
      const [field, text] = counter(name, value);
      counters[field] = text;
    }
  return [type, String(provider ?? ''), String(model ?? ''), counters];
}

/**
 * a + sign × b of two plain decimal strings, exactly. By hand (BigInt at a common scale) because the
 * package has no runtime dependency beyond Node, and Node has no decimal type.
 */
function combine(a: string, b: string, sign: 1n | -1n): string {
  const scale = Math.max(decimals(a), decimals(b));
  const scaled = (text: string) => BigInt(text.replace('.', '') + '0'.repeat(scale - decimals(text)));
  const result = scaled(a) + sign * scaled(b);
  const digits = (result < 0n ? -result : result).toString();
  return (result < 0n ? '-' : '') + shiftDecimal(digits, -scale);
}

export const decimalMinus = (a: string, b: string) => combine(a, b, -1n);
export const decimalPlus = (a: string, b: string) => combine(a, b, 1n);

const decimals = (text: string) => (text.split('.')[1] ?? '').length;
const isZero = (text: string | undefined) => text === undefined || /^0*\.?0*$/.test(text);

/** The event type and quantities of a usage's counts (a delta), or null when they bill nothing. */
export function eventFields(kind: string, counts: Counters): EventFields | null {
  if (Object.values(counts).every(isZero)) return null;
  const count = (name: string) => counts[name] ?? '0';
  if (kind === 'llm_usage') {
    const quantities: Record<string, string> = {
      // An event may carry only the session's connected time: quantity 0 tokens then.
      quantity: (BigInt(count('inputTokens')) + BigInt(count('outputTokens'))).toString(),
      input_tokens: count('inputTokens'),
      output_tokens: count('outputTokens'),
    };
    for (const [name, wire] of Object.entries(LLM_FIELDS)) if (!isZero(counts[name])) quantities[wire] = counts[name]!;
    const text = Object.entries(LLM_TEXT_FIELDS).filter(([name]) => !isZero(counts[name]));
    const usageData = Object.fromEntries(text.map(([name, wire]) => [wire, counts[name]!]));
    return { eventType: 'llm_tokens', quantities, ...(text.length > 0 ? { usageData } : {}) };
  }
  const tokens = isZero(counts.inputTokens) && isZero(counts.outputTokens) ? {} : tokenFields(kind, counts);
  if (kind === 'tts_usage') {
    const duration = isZero(counts.audioDuration)
      ? {}
      : { usageData: { audio_duration_seconds: count('audioDuration') } };
    return { eventType: 'tts_characters', quantities: { quantity: count('charactersCount'), ...tokens }, ...duration };
  }
  // The duration is always sent: it is the event's quantity (minutes, divided exactly by the server).
  return {
    eventType: 'stt_minutes',
    quantities: tokens,
    usageData: { audio_duration_seconds: count('audioDuration') },
  };
}

/** TTS: text in, audio out (token-billed voices); STT: audio in, text out (token-billed transcription). */
function tokenFields(kind: string, counts: Counters): Record<string, string> {
  const input = counts.inputTokens ?? '0';
  const output = counts.outputTokens ?? '0';
  if (kind === 'tts_usage') return { input_tokens: input, output_tokens: output, audio_output_tokens: output };
  return { input_tokens: input, output_tokens: output, audio_input_tokens: input };
}

/** One metric of `metrics_collected` as the usage LiveKit's ModelUsageCollector adds it up to. */
export function metricUsage(metric: metrics.AgentMetrics): Partial<metrics.ModelUsage> | null {
  const metadata = 'metadata' in metric ? metric.metadata : undefined;
  const named = { provider: metadata?.modelProvider ?? '', model: metadata?.modelName ?? '' };
  switch (metric.type) {
    case 'llm_metrics':
      return {
        type: 'llm_usage',
        ...named,
        inputTokens: metric.promptTokens,
        inputCachedTokens: metric.promptCachedTokens,
        inputCacheCreationTokens: metric.cacheCreationTokens ?? 0,
        outputTokens: metric.completionTokens,
      };
    case 'realtime_model_metrics': {
      const inputs = metric.inputTokenDetails;
      const cached = inputs.cachedTokensDetails;
      return {
        type: 'llm_usage',
        ...named,
        inputTokens: metric.inputTokens,
        inputCachedTokens: inputs.cachedTokens,
        inputAudioTokens: inputs.audioTokens,
        inputCachedAudioTokens: cached?.audioTokens ?? 0,
        inputTextTokens: inputs.textTokens,
        inputCachedTextTokens: cached?.textTokens ?? 0,
        inputImageTokens: inputs.imageTokens,
        inputCachedImageTokens: cached?.imageTokens ?? 0,
        outputTokens: metric.outputTokens,
        outputAudioTokens: metric.outputTokenDetails.audioTokens,
        outputTextTokens: metric.outputTokenDetails.textTokens,
        sessionDurationMs: metric.sessionDurationMs ?? 0,
      };
    }
    case 'tts_metrics':
      return {
        type: 'tts_usage',
        ...named,
        inputTokens: metric.inputTokens ?? 0,
        outputTokens: metric.outputTokens ?? 0,
        charactersCount: metric.charactersCount,
        audioDurationMs: metric.audioDurationMs,
      };
    case 'stt_metrics':
      return {
        type: 'stt_usage',
        ...named,
        inputTokens: metric.inputTokens ?? 0,
        outputTokens: metric.outputTokens ?? 0,
        audioDurationMs: metric.audioDurationMs,
      };
    default:
      return null;
  }
}
