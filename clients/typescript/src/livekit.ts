import { metrics, voice } from '@livekit/agents';
import { CONSOLE_LOGGER, QueueFullError, type Callmeter, type Logger } from './client.ts';
import { providerId } from './providers.ts';
import { plain, shiftDecimal, type Quantity } from './records.ts';

type AgentMetrics = metrics.AgentMetrics;

interface Usage {
  readonly eventType: string;
  readonly quantities?: Record<string, Quantity>;
  readonly usageData?: Record<string, Quantity>;
}

/**
 * Turns LiveKit Agents for Node's metrics (what `metrics_collected` carries) into callmeter usage:
 * LLM and realtime metrics as `llm_tokens` with their token kinds, STT as `stt_minutes` (the audio
 * duration in seconds, exact), TTS as `tts_characters`. Each event's key is the metric's own ids, so
 * one metric forwarded twice is one event. Metrics with nothing to bill are skipped.
 */
export class UsageForwarder {
  /** LiveKit's own usage totals of the metrics this forwarder saw, each once. */
  readonly collector = new metrics.ModelUsageCollector();
  private readonly seen = new Set<string>();

  constructor(
    readonly client: Pick<Callmeter, 'record'>,
    readonly call: { readonly sessionId: string; readonly userId: string; readonly agentId?: string },
    private readonly logger: Logger = CONSOLE_LOGGER,
  ) {}

  /** Records one metric; returns its event id, or null when it bills nothing. */
  onMetrics(metric: AgentMetrics): string | null {
    const usage = usageOf(metric);
    if (usage === null) return null;
    const key = metricKey(metric);
    if (!this.seen.has(key)) {
      this.seen.add(key);
      this.collector.collect(metric);
    }
    const metadata = 'metadata' in metric ? metric.metadata : undefined;
    try {
      return this.client.record({
        sessionId: this.call.sessionId,
        userId: this.call.userId,
        agentId: this.call.agentId,
        provider: providerId(metadata?.modelProvider),
        model: metadata?.modelName || undefined,
        key,
        timestamp: metric.timestamp,
        ...usage,
      });
    } catch (error) {
      if (!(error instanceof QueueFullError)) throw error;
      this.logger.error(`callmeter: usage of ${key} not recorded: the queue is full`);
      return null;
    }
  }

  /** Subscribes to an AgentSession's metrics_collected event; returns the unsubscribe. */
  attach(session: voice.AgentSession): () => void {
    const listener = (event: voice.MetricsCollectedEvent) => void this.onMetrics(event.metrics);
    session.on(voice.AgentSessionEventTypes.MetricsCollected, listener);
    return () => session.off(voice.AgentSessionEventTypes.MetricsCollected, listener);
  }

  /**
   * True when the session's own usage totals (LLM, STT, TTS) equal those of what was recorded;
   * else a warning naming what differs.
   */
  compareTotals(session: voice.AgentSession): boolean {
    const key = (usage: Partial<metrics.ModelUsage>) => `${usage.type}|${usage.provider}|${usage.model}`;
    // The session reports its totals with the zero fields left out: compared the same way.
    const ours = new Map(
      this.collector
        .flatten()
        .map(metrics.filterZeroValues)
        .map((usage) => [key(usage), JSON.stringify(usage)]),
    );
    const differing = session.usage.modelUsage
      .filter((usage) => ['llm_usage', 'stt_usage', 'tts_usage'].includes(usage.type ?? ''))
      .filter((usage) => ours.get(key(usage)) !== JSON.stringify(usage))
      .map(key);
    if (differing.length > 0)
      this.logger.warn(`callmeter: LiveKit's usage totals differ from what was recorded for ${differing.join(', ')}`);
    return differing.length === 0;
  }
}

/** The metric's own identity: its type, label, request and speech ids and its timestamp. */
export function metricKey(metric: AgentMetrics): string {
  const field = (name: string) => String((metric as Record<string, unknown>)[name] ?? '');
  const speech = field('speechId') || field('segmentId');
  return `livekit:${metric.type}|${field('label')}|${field('requestId')}|${speech}|${metric.timestamp}`;
}

function usageOf(metric: AgentMetrics): Usage | null {
  switch (metric.type) {
    case 'llm_metrics': {
      const total = metric.promptTokens + metric.completionTokens;
      if (total === 0) return null;
      return tokens({
        quantity: total,
        input_tokens: metric.promptTokens,
        cached_input_tokens: metric.promptCachedTokens,
        cache_write_tokens: metric.cacheCreationTokens ?? 0,
        output_tokens: metric.completionTokens,
      });
    }
    case 'realtime_model_metrics': {
      const total = metric.inputTokens + metric.outputTokens;
      if (total === 0) return null;
      const inputs = metric.inputTokenDetails;
      return tokens({
        quantity: total,
        input_tokens: metric.inputTokens,
        cached_input_tokens: inputs.cachedTokens,
        audio_input_tokens: inputs.audioTokens,
        cached_audio_input_tokens: inputs.cachedTokensDetails?.audioTokens ?? 0,
        output_tokens: metric.outputTokens,
        audio_output_tokens: metric.outputTokenDetails.audioTokens,
      });
    }
    case 'stt_metrics':
      if (!(metric.audioDurationMs > 0)) return null;
      return {
        eventType: 'stt_minutes',
        // Milliseconds to seconds by moving the point, so no float division touches the quantity.
        usageData: { audio_duration_seconds: shiftDecimal(plain(String(metric.audioDurationMs)), -3) },
      };
    case 'tts_metrics':
      return metric.charactersCount > 0
        ? { eventType: 'tts_characters', quantities: { quantity: metric.charactersCount } }
        : null;
    default:
      return null;
  }
}

/** An llm_tokens event with the token kinds that are not zero (quantity, input and output always). */
function tokens(counts: Record<string, number>): Usage {
  const kept = Object.entries(counts).filter(
    ([name, count]) => count !== 0 || ['quantity', 'input_tokens', 'output_tokens'].includes(name),
  );
  return { eventType: 'llm_tokens', quantities: Object.fromEntries(kept) };
}
