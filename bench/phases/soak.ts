import { EventStreamReader, type StreamMessage } from '../../test/support/event-stream-reader.ts';
import { percentile } from '../queries/measure.ts';
import { createSessions, eventCount, type BenchSession } from '../support/callmeter-api.ts';
import { drive, rssMb, say, sleep, type Server } from '../support/processes.ts';
import type { Metric } from '../support/results.ts';

/**
 * The soak, once (five minutes by nature): single events at half the rate ingest took, for `soakMs`,
 * while probes one at a time time an event from its 201 to the summary counting it and to the live
 * stream's message; ingest's resident memory every 5 s, its growth after the first sixth.
 */
export interface SoakContext {
  readonly ingest: Server;
  /** A consumer+query process storing what ingest publishes. */
  readonly consumer: Server;
  readonly sessions: readonly BenchSession[];
  /** Half of it is the soak's rate. */
  readonly singleEventsPerS: number;
  readonly soakMs: number;
  readonly probes: number;
}

export async function soak(context: SoakContext): Promise<Metric[]> {
  const { ingest, consumer, sessions, soakMs } = context;
  const half = Math.max(1, Math.round(context.singleEventsPerS / 2));
  say(`soak at half the single-event rate (${half} events/s) for ${soakMs / 1000} s, with freshness probes`);
  const rss: number[] = [];
  const soakSampler = setInterval(() => rss.push(rssMb(ingest.child.pid!)), 5_000);
  const load = drive({ url: ingest.url, mode: 'single', durationMs: soakMs, connections: 16, rate: half, sessions });
  await sleep(2_000);
  const latencies = await freshness(ingest.url, consumer.url, context.probes);
  const soakResult = await load;
  clearInterval(soakSampler);
  const metrics: Metric[] = [];
  for (const p of [50, 95, 99])
    metrics.push({
      name: `e2e_freshness_p${p}_ms`,
      value: Math.round(percentile(latencies.visible, p)),
      unit: 'ms',
      ...(p === 95 ? { target: '<= 500' } : p === 99 ? { target: '<= 1000' } : {}),
    });
  // The live stream: a message within 1 s of the event being stored. Stored is read as
  // "visible in the summary", polled every 25 ms, so the figure after it is the stream's own delay
  // within a poll; the one from the 201 includes the pipeline.
  if (latencies.live.length > 0)
    for (const p of [50, 95]) {
      metrics.push({
        name: `live_stream_after_stored_p${p}_ms`,
        value: Math.round(percentile(latencies.liveAfterVisible, p)),
        unit: 'ms',
        ...(p === 95 ? { target: '<= 1000' } : {}),
      });
      metrics.push({
        name: `live_stream_after_201_p${p}_ms`,
        value: Math.round(percentile(latencies.live, p)),
        unit: 'ms',
      });
    }
  const warm = rss[Math.floor(rss.length / 6)] ?? rss[0]!;
  const end = rss.slice(-3).reduce((a, b) => a + b, 0) / Math.min(3, rss.length);
  metrics.push({
    name: 'soak_rss_growth_pct',
    value: Math.round(((end - warm) / warm) * 1000) / 10,
    unit: '%',
    target: '< 10',
  });
  metrics.push({ name: 'soak_events_per_s', value: soakResult.events_per_s, unit: 'events/s' });
  return metrics;
}

const PROBE_USER = 'bench-probe';

/** A probe not visible after this long ends the probing: the pipeline has fallen behind the load. */
const PROBE_GIVE_UP_MS = 30_000;

/**
 * From the 201 of one event to its cost visible in the summary, sequentially, `count` times. A probe
 * still not visible after PROBE_GIVE_UP_MS is counted at that figure and ends the probing: the run then
 * reports a freshness that missed its target by far, rather than no figures at all.
 */
interface Freshness {
  /** From the 201 to the cost visible in the summary. */
  readonly visible: number[];
  /** From the 201 to the live stream's message that counts the event (GET /api/costs/live). */
  readonly live: number[];
  /** From the summary showing the event (stored) to that message: the stream's own delay, at most. */
  readonly liveAfterVisible: number[];
}

async function freshness(ingestUrl: string, queryUrl: string, count: number): Promise<Freshness> {
  const [session] = await createSessions(ingestUrl, PROBE_USER, 1);
  const result: Freshness = { visible: [], live: [], liveAfterVisible: [] };
  const sorted = () => {
    for (const list of Object.values(result)) list.sort((a: number, b: number) => a - b);
    return result;
  };
  const stream = await EventStreamReader.open(`${queryUrl}/api/costs/live`, { 'x-user-id': PROBE_USER });
  const liveEvents = (message: StreamMessage | undefined) =>
    (message?.data as { sessions?: { event_count: number }[] } | undefined)?.sessions?.[0]?.event_count ?? 0;
  try {
    await stream.message(1);
    let seen = await eventCount(queryUrl, PROBE_USER);
    for (let i = 0; i < count; i += 1) {
      const response = await fetch(`${ingestUrl}/api/usage/events`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          session_id: session!.id,
          user_id: PROBE_USER,
          provider: 'resemble',
          event_type: 'tts_characters',
          quantity: 1,
        }),
      });
      if (response.status !== 201) throw new Error(`probe answered ${response.status}`);
      const acknowledged = performance.now();
      while ((await eventCount(queryUrl, PROBE_USER)) <= seen) {
        if (performance.now() - acknowledged > PROBE_GIVE_UP_MS) {
          say(
            `a probe event was not visible within ${PROBE_GIVE_UP_MS / 1000} s, after ${result.visible.length} probes: the consumer is behind the soak's load`,
          );
          result.visible.push(PROBE_GIVE_UP_MS);
          return sorted();
        }
        // Every poll is a summary (four queries on the engine the consumer writes to): poll gently.
        await sleep(25);
      }
      const visible = performance.now();
      result.visible.push(visible - acknowledged);
      seen += 1;
      await stream.until(() => liveEvents(stream.messages.at(-1)) >= seen, PROBE_GIVE_UP_MS, 'live message');
      const message = stream.messages.find((m) => liveEvents(m) >= seen)!;
      result.live.push(message.receivedAt - acknowledged);
      result.liveAfterVisible.push(Math.max(0, message.receivedAt - visible));
    }
    return sorted();
  } finally {
    stream.close();
  }
}
