import { Counter, Gauge, Registry } from 'prom-client';
import type { ClickHouse } from '../shared/clickhouse/client.ts';
import type { LiveStreams, StreamRefusal } from './live/live-streams.ts';

/** The query side's load, read when /metrics is scraped: live streams, and the cost reads' queue. */
export function queryMetrics(streams: LiveStreams, reads: ClickHouse): Registry {
  const registry = new Registry();
  const gauge = (name: string, help: string, value: () => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(value());
      },
    });
  const total = (name: string, help: string, value: () => number) =>
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset();
        this.inc(value());
      },
    });
  gauge('callmeter_live_streams_open', 'Live cost streams open in this process', () => streams.stats.open);
  total(
    'callmeter_live_stream_reads_total',
    'Reads of ClickHouse the live streams ran (one per change per tenant or session, whatever its streams)',
    () => streams.stats.readsRun,
  );
  gauge(
    'callmeter_live_stream_reads_waiting',
    'Reads of the live streams waiting for a read slot (LIVE_STREAM_READS)',
    () => streams.stats.readsWaiting,
  );
  new Counter({
    name: 'callmeter_live_streams_refused_total',
    help: 'Live streams refused by a cap: tenant and caller (429), process (503)',
    labelNames: ['cap'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [cap, refused] of Object.entries(streams.stats.refused) as [StreamRefusal, number][])
        this.labels(cap).inc(refused);
    },
  });
  const queue = reads.queue;
  if (queue !== undefined) {
    gauge(
      'callmeter_clickhouse_reads_waiting',
      'Cost reads waiting for one of the embedded engine’s read connections (CLICKHOUSE_READ_CONNECTIONS)',
      () => queue.waiting,
    );
    gauge(
      'callmeter_clickhouse_reads_running',
      'Cost reads running on the embedded engine’s read connections',
      () => queue.running,
    );
    total(
      'callmeter_clickhouse_reads_withdrawn_total',
      'Cost reads withdrawn from the wait for a connection because their client went away',
      () => queue.withdrawn,
    );
  }
  return registry;
}
