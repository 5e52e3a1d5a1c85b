import { voice, type metrics } from '@livekit/agents';
import type { CapCallback } from './caps.ts';
import { CONSOLE_LOGGER, QueueFullError, type Callmeter, type Logger } from './client.ts';
import {
  countersOf,
  decimalMinus,
  decimalPlus,
  eventFields,
  metricUsage,
  type Counters,
  type EventFields,
} from './livekit-usage.ts';
import { providerId } from './providers.ts';

type AgentMetrics = metrics.AgentMetrics;
type Usage = { readonly modelUsage: readonly Partial<metrics.ModelUsage>[] };

const USAGE_EVENT = 'SessionUsageUpdated';
/** Whether the installed @livekit/agents emits the session's running totals (`session_usage_updated`). */
export const EMITS_USAGE = USAGE_EVENT in voice.AgentSessionEventTypes;

// One id per run of a session's totals, shared by every forwarder of this process: LiveKit starts a new
// collector at each AgentSession.start(), and keeps no id of a run it could be named by.
const runs = new WeakMap<object, string>();
let runCount = 0;

/** The run of an AgentSession's totals: the collector LiveKit starts afresh at each start(). */
export function runOf(session: voice.AgentSession): string {
  const collector = session._usageCollector as object;
  let run = runs.get(collector);
  if (run === undefined) {
    runCount += 1;
    run = `${process.pid}-${Date.now()}-${runCount}`;
    runs.set(collector, run);
  }
  return run;
}

/**
 * Forwards an AgentSession's usage to callmeter (docs/clients-livekit.md). With `session_usage_updated`
 * (the session's running totals per kind, provider and model), each total's growth since the last one
 * forwarded is one event, keyed by the call, the run, the kind, provider and model and every counter's
 * value reached: a snapshot seen again is the same event id, counted once by the server; an older one
 * adds nothing; one the client could not queue is carried by the next. Without it (older versions), each
 * metric of `metrics_collected` is one event keyed by the metric's own ids.
 *
 * With `onCapReached`, the call's standing is watched once its usage is sent (Callmeter.watchCap) until the
 * session closes, and onCapReached(standing) runs once when the call reached its per-call cap: the place to
 * say goodbye and close the session.
 */
export class UsageForwarder {
  /** What was forwarded: per run, kind, provider and model, the totals reached (LiveKit's counters, exact). */
  readonly forwarded = new Map<string, Counters>();
  private readonly seenMetrics = new Set<string>();
  private unwatchCap: (() => void) | null = null;

  constructor(
    readonly client: Pick<Callmeter, 'record'> & Partial<Pick<Callmeter, 'watchCap'>>,
    readonly call: {
      readonly sessionId: string;
      readonly userId: string;
      readonly agentId?: string;
      readonly onCapReached?: CapCallback;
    },
    private readonly logger: Logger = CONSOLE_LOGGER,
  ) {
    if (call.onCapReached !== undefined && client.watchCap === undefined)
      throw new TypeError('onCapReached needs a client with watchCap (a Callmeter)');
  }

  /** Forwards a snapshot of LiveKit's running totals; returns the ids of the events it recorded. */
  onUsage(usage: Usage, options: { readonly run?: string; readonly timestamp?: number } = {}): string[] {
    const recorded: string[] = [];
    for (const modelUsage of usage.modelUsage) {
      const parsed = countersOf(modelUsage);
      if (parsed === null) continue;
      const [kind, provider, model, reached] = parsed;
      const id = this.forwardGrowth([options.run ?? '', kind, provider, model], reached, options.timestamp);
      if (id !== null) recorded.push(id);
    }
    return recorded;
  }

  private forwardGrowth(key: readonly string[], reached: Counters, timestamp: number | undefined): string | null {
    const before = this.forwarded.get(key.join('|')) ?? {};
    const names = [...new Set([...Object.keys(reached), ...Object.keys(before)])].sort();
    const delta = Object.fromEntries(
      names.map((name) => [name, decimalMinus(reached[name] ?? '0', before[name] ?? '0')]),
    );
    const signs = Object.values(delta).map((value) => (value.startsWith('-') ? -1 : /[1-9]/.test(value) ? 1 : 0));
    if (!signs.includes(1)) return null; // this snapshot or a later one was forwarded already
    if (signs.includes(-1)) {
      // Within a run LiveKit's totals only grow; a mix means they restarted under the same run.
      this.logger.warn(`callmeter: LiveKit's totals for ${key.join('|')} went down and up at once: not forwarded`);
      return null;
    }
    const fields = eventFields(key[1]!, delta);
    if (fields === null) return null;
    const snapshot = names.map((name) => `${name}=${reached[name] ?? '0'}`).join(',');
    const eventKey = `livekit-usage:${[this.call.sessionId, ...key, snapshot].join('|')}`;
    const id = this.record(key[2]!, key[3]!, eventKey, timestamp, fields);
    if (id !== null) this.forwarded.set(key.join('|'), { ...reached });
    return id;
  }

  /** Records one metric of `metrics_collected` (versions without session_usage_updated); null when it bills nothing. */
  onMetrics(metric: AgentMetrics): string | null {
    const usage = metricUsage(metric);
    const parsed = usage === null ? null : countersOf(usage);
    if (parsed === null) return null;
    const [kind, provider, model, counts] = parsed;
    const fields = eventFields(kind, counts);
    if (fields === null) return null;
    const key = metricKey(metric);
    const id = this.record(provider, model, key, metric.timestamp, fields);
    if (id !== null && !this.seenMetrics.has(key)) {
      this.seenMetrics.add(key);
      const totalsKey = ['metrics', kind, provider, model].join('|');
      const totals = this.forwarded.get(totalsKey) ?? {};
      for (const [name, value] of Object.entries(counts)) totals[name] = decimalPlus(totals[name] ?? '0', value);
      this.forwarded.set(totalsKey, totals);
    }
    return id;
  }

  private record(provider: string, model: string, key: string, timestamp: number | undefined, fields: EventFields) {
    if (this.call.onCapReached !== undefined && this.unwatchCap === null)
      this.unwatchCap = this.client.watchCap!(this.call.sessionId, this.call.onCapReached);
    try {
      return this.client.record({
        sessionId: this.call.sessionId,
        userId: this.call.userId,
        agentId: this.call.agentId,
        provider: providerId(provider),
        model: model || undefined,
        key,
        timestamp,
        eventType: fields.eventType,
        quantities: fields.quantities,
        usageData: fields.usageData,
      });
    } catch (error) {
      if (!(error instanceof QueueFullError)) throw error;
      this.logger.error(`callmeter: usage of ${key} not recorded: the queue is full`);
      return null;
    }
  }

  /**
   * Subscribes to an AgentSession (before its start()): `session_usage_updated` where LiveKit has it,
   * else `metrics_collected`; and, with onCapReached, to its close, after which the cap is watched no more.
   * Returns the unsubscribe.
   */
  attach(session: voice.AgentSession): () => void {
    const closed = () => this.unwatchCap?.();
    if (this.call.onCapReached !== undefined) session.on(voice.AgentSessionEventTypes.Close, closed);
    const detachCap = () => session.off(voice.AgentSessionEventTypes.Close, closed);
    if (EMITS_USAGE) {
      const listener = (event: voice.SessionUsageUpdatedEvent) =>
        void this.onUsage(event.usage, { run: runOf(session), timestamp: event.createdAt });
      session.on(voice.AgentSessionEventTypes.SessionUsageUpdated, listener);
      return () => {
        detachCap();
        session.off(voice.AgentSessionEventTypes.SessionUsageUpdated, listener);
      };
    }
    const listener = (event: voice.MetricsCollectedEvent) => void this.onMetrics(event.metrics);
    session.on(voice.AgentSessionEventTypes.MetricsCollected, listener);
    return () => {
      detachCap();
      session.off(voice.AgentSessionEventTypes.MetricsCollected, listener);
    };
  }

  /** What was forwarded for a run, per `kind|provider|model`, in LiveKit's counters (durations in seconds). */
  totals(run: string): Map<string, Counters> {
    const prefix = `${run}|`;
    return new Map(
      [...this.forwarded]
        .filter(([key]) => key.startsWith(prefix))
        .map(([key, counts]) => [key.slice(prefix.length), counts]),
    );
  }

  /**
   * True when the session's own totals (LLM, STT, TTS) equal what was forwarded for its current run;
   * else a warning naming what differs.
   */
  compareTotals(session: voice.AgentSession): boolean {
    const ours = this.totals(EMITS_USAGE ? runOf(session) : 'metrics');
    const differing: string[] = [];
    for (const usage of session.usage.modelUsage) {
      const parsed = countersOf(usage);
      if (parsed === null) continue;
      const [kind, provider, model, theirs] = parsed;
      const key = `${kind}|${provider}|${model}`;
      const forwarded = ours.get(key) ?? {};
      const names = new Set([...Object.keys(theirs), ...Object.keys(forwarded)]);
      if ([...names].some((name) => /[1-9]/.test(decimalMinus(theirs[name] ?? '0', forwarded[name] ?? '0'))))
        differing.push(key);
    }
    if (differing.length > 0)
      this.logger.warn(`callmeter: LiveKit's usage totals differ from what was forwarded for ${differing.join(', ')}`);
    return differing.length === 0;
  }
}

/** The metric's own identity: its type, label, request and speech ids and its timestamp. */
export function metricKey(metric: AgentMetrics): string {
  const field = (name: string) => String((metric as Record<string, unknown>)[name] ?? '');
  const speech = field('speechId') || field('segmentId');
  return `livekit:${metric.type}|${field('label')}|${field('requestId')}|${speech}|${metric.timestamp}`;
}
