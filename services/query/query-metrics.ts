import { setTimeout as sleep } from 'node:timers/promises';
import { Counter, Gauge, Registry } from 'prom-client';
import type { ClickHouse } from '../shared/clickhouse/client.ts';
import type { LiveStreams, StreamRefusal } from './live/live-streams.ts';

/**
 * The query side's load, read when /metrics is scraped: live streams, the cost reads' queue, and the
 * embedded engine's memory as it accounts for it.
 */
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
  if (reads.embedded) engineMetrics(registry, reads);
  return registry;
}

/** The engine's counters (system.metrics) behind each part of callmeter_clickhouse_engine_memory_bytes. */
const ENGINE_MEMORY: Readonly<Record<string, string>> = {
  tracked: 'MemoryTracking',
  mark_cache: 'MarkCacheBytes',
  uncompressed_cache: 'UncompressedCacheBytes',
  primary_index_cache: 'PrimaryIndexCacheBytes',
  query_condition_cache: 'QueryConditionCacheBytes',
  index_mark_cache: 'IndexMarkCacheBytes',
  index_uncompressed_cache: 'IndexUncompressedCacheBytes',
  compiled_expression_cache: 'CompiledExpressionCacheBytes',
};

/** How long a scrape waits for the engine's figures before it answers with the last ones read. */
const SCRAPE_WAIT_MS = 200;

interface EngineStats {
  readonly memory: ReadonlyMap<string, number>;
  readonly parts: { readonly active: number; readonly outdated: number };
}

/**
 * The embedded engine's memory (what it tracks as allocated, its caches, its parts' primary keys) and
 * its parts, read from its system tables when scraped (at most once a second): how much of the process's
 * memory outside V8 the engine holds, and whether it follows the data (parts, keys) or its caches. A read
 * that fails leaves both gauges empty rather than failing /metrics.
 */
function engineMetrics(registry: Registry, reads: ClickHouse): void {
  let latest: EngineStats | null = null;
  let reading: Promise<void> | null = null;
  let readAt = Number.NEGATIVE_INFINITY;
  const stats = async () => {
    if (reading === null && performance.now() - readAt > 1_000) {
      readAt = performance.now();
      reading = readEngineStats(reads)
        .then(
          (read) => void (latest = read),
          () => void (latest = null),
        )
        .finally(() => (reading = null));
    }
    // The statements queue behind the cost reads for the engine's read connections: a scrape waits for
    // them a moment, then answers with what the last read found rather than waiting out the queue.
    if (reading !== null) await Promise.race([reading, sleep(SCRAPE_WAIT_MS)]);
    return latest;
  };
  new Gauge({
    name: 'callmeter_clickhouse_engine_memory_bytes',
    help: 'The embedded engine’s memory by part: tracked (all it accounts for), each cache, primary_keys (of its parts)',
    labelNames: ['part'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const [part, bytes] of (await stats())?.memory ?? []) this.labels(part).set(bytes);
    },
  });
  new Gauge({
    name: 'callmeter_clickhouse_engine_parts',
    help: 'The embedded engine’s data parts: active, and outdated (replaced by a merge, kept a few minutes)',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      this.reset();
      const parts = (await stats())?.parts;
      if (parts === undefined) return;
      this.labels('active').set(parts.active);
      this.labels('outdated').set(parts.outdated);
    },
  });
}

async function readEngineStats(reads: ClickHouse): Promise<EngineStats> {
  const counters = await reads.client.query({
    query: 'SELECT metric, toString(value) AS value FROM system.metrics WHERE metric IN {names:Array(String)}',
    query_params: { names: Object.values(ENGINE_MEMORY) },
    format: 'JSONEachRow',
  });
  const byCounter = new Map(
    (await counters.json<{ metric: string; value: string }>()).map((row) => [row.metric, Number(row.value)]),
  );
  const parts = await reads.client.query({
    query: `SELECT toString(countIf(active)) AS parts_active, toString(countIf(NOT active)) AS parts_outdated,
      toString(sum(primary_key_bytes_in_memory_allocated)) AS primary_keys FROM system.parts`,
    format: 'JSONEachRow',
  });
  const [row] = await parts.json<{ parts_active: string; parts_outdated: string; primary_keys: string }>();
  const memory = new Map<string, number>();
  for (const [part, counter] of Object.entries(ENGINE_MEMORY)) {
    const bytes = byCounter.get(counter);
    if (bytes !== undefined) memory.set(part, bytes);
  }
  memory.set('primary_keys', Number(row?.primary_keys ?? 0));
  return {
    memory,
    parts: { active: Number(row?.parts_active ?? 0), outdated: Number(row?.parts_outdated ?? 0) },
  };
}
