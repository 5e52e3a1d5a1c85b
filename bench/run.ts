import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../services/shared/config.ts';
import { createKafka } from '../services/shared/kafka/client.ts';
import { ensureTopics, topicSpecs } from '../services/shared/kafka/topics.ts';
import { createLogger } from '../services/shared/logger.ts';
import { queriesResultFile } from './queries/dataset.ts';
import { percentile } from './queries/measure.ts';
import { EventStreamReader, type StreamMessage } from '../test/support/event-stream-reader.ts';
import { startBackingServices } from './support/backing-services.ts';
import { createSessions, eventCount } from './support/callmeter-api.ts';
import {
  drive,
  ROOT,
  rssMb,
  runInherited,
  runJson,
  say,
  sleep,
  startServer,
  type Server,
} from './support/processes.ts';
import { describeMachine, metricTable, ratioOf, writeResults, type Metric } from './support/results.ts';
import { noisyNeighbour, type NoisyNeighbourOptions } from './load/noisy-neighbour.ts';
import { budgetAlerts, type BudgetAlertOptions } from './load/budget-alerts.ts';

/**
 * npm run bench — one command, one machine, one run: every figure beside a baseline measured in the
 * same run (this machine is shared and noisy, so ratios are what compare across runs). Load comes
 * from separate processes on loopback. BENCH_MODE=ci runs a reduced version (shorter load and soak,
 * a 1-million-event query dataset) that checks the whole path in CI. BENCH_PHASE=noisy-neighbour or
 * BENCH_PHASE=redis-memory runs that phase alone (bench/results/<phase>*.json), as its work is tried.
 */
const CI = process.env.BENCH_MODE === 'ci';
const PHASE = process.env.BENCH_PHASE ?? 'all';
const LOAD_MS = CI ? 5_000 : 20_000;
// Unmeasured load before each measured one: the broker's JVM and every fresh Node process compile
// their hot paths in the first seconds (back-to-back loads of one setup grew faster as the broker
// warmed), and a broker in production has long been warm.
const WARMUP_MS = CI ? 2_000 : 10_000;
const SOAK_MS = CI ? 20_000 : 300_000;
const PROBES = CI ? 30 : 200;
const CLIENTS = 64;
const FEW_CLIENTS = 4;
const BATCH_CLIENTS = 8;
const BATCH_SIZE = 500;
const QUERY_EVENTS = CI ? 1_000_000 : 10_000_000;
// Usage events through the Kafka path for the Redis memory figure (not in BENCH_MODE=ci: 10 million take
// about 10 minutes on a quiet machine); BENCH_REDIS_EVENTS runs it at another count.
const REDIS_EVENTS = Number(process.env.BENCH_REDIS_EVENTS ?? 10_000_000);
const REDIS_LIVE_SESSIONS = 1_000;
const USER = 'bench';
const CAPS = loadConfig({});
const NOISY_NEIGHBOUR = (folder: string): NoisyNeighbourOptions => ({
  dataDir: path.join(folder, 'noisy-neighbour'),
  measureMs: CI ? 8_000 : 30_000,
  // The full run holds the most of every per-tenant cap (their defaults); CI a part of each.
  rateEntries: CI ? 200 : CAPS.rateEntriesPerTenant,
  agents: CI ? 20 : Math.min(CAPS.agentCaps.agentsPerTenant, CAPS.agentCaps.numbersPerTenant),
  keys: CI ? 5 : CAPS.auth.keysPerTenant,
  noisyEventsPerS: 20,
});
const BUDGETS = (folder: string): BudgetAlertOptions => ({
  dataDir: path.join(folder, 'budgets'),
  // The full run holds the most budgets one tenant may (10,000); CI a part.
  budgets: CI ? 500 : 10_000,
  events: CI ? 10_000 : 100_000,
  probes: CI ? 10 : 50,
});
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

/** Phases that can run alone (BENCH_PHASE), each in a folder of its own. */
const PHASES_ALONE: Record<string, ((folder: string) => Promise<Metric[]>) | undefined> = {
  'noisy-neighbour': (folder) => noisyNeighbour(NOISY_NEIGHBOUR(folder)),
  budgets: (folder) => budgetAlerts(BUDGETS(folder)),
  'redis-memory': async (folder) =>
    redisMemoryMetrics(await redisMemory(path.join(folder, 'redis-memory'), REDIS_EVENTS)),
};

async function main(): Promise<void> {
  const metrics: Metric[] = [];
  const started = Date.now();
  const alone = PHASES_ALONE[PHASE];
  if (alone !== undefined) {
    // Its own folder, so that trying a phase leaves a full run's data alone.
    const own = mkdtempSync(path.join(os.tmpdir(), `callmeter-bench-${PHASE}-`));
    try {
      metrics.push(...(await alone(own)));
    } finally {
      rmSync(own, { recursive: true, force: true });
    }
    const file = CI ? `${PHASE}-ci` : PHASE;
    const table = metricTable(metrics);
    writeResults(file, { machine: describeMachine(`${CI ? 'ci' : 'full'} ${PHASE}`, started), metrics }, table);
    say(`\n${table.join('\n')}\n\nwrote bench/results/${file}.json and ${file}.md`);
    return;
  }
  if (PHASE !== 'all')
    throw new Error(`BENCH_PHASE=${PHASE}: the phases are all (the default), ${Object.keys(PHASES_ALONE).join(', ')}`);
  const folder = path.join(ROOT, '.local', 'bench', 'run');
  rmSync(folder, { recursive: true, force: true });
  mkdirSync(folder, { recursive: true });

  say('starting the Kafka broker and redis-server');
  const backing = await startBackingServices(folder, 'bench');
  const { kafka, env: services } = backing;
  const servers: Server[] = [];
  try {
    say('baseline: a bare Koa route');
    const bare = await startServer('bench/load/bare-server.ts', {});
    servers.push(bare);
    await drive({
      url: bare.url,
      mode: 'bare',
      durationMs: WARMUP_MS,
      connections: CLIENTS,
      sessions: [{ id: 'x', user_id: 'x' }],
    });
    const bareResult = await drive({
      url: bare.url,
      mode: 'bare',
      durationMs: LOAD_MS,
      connections: CLIENTS,
      sessions: [{ id: 'x', user_id: 'x' }],
    });
    // A small fleet's load: the baseline of the embedded mode at 4 connections.
    const bareFew = await drive({
      url: bare.url,
      mode: 'bare',
      durationMs: LOAD_MS,
      connections: FEW_CLIENTS,
      sessions: [{ id: 'x', user_id: 'x' }],
    });
    await bare.stop();

    say('ingest through Kafka: single events');
    const ingest = await startServer('services/main.ts', {
      ...services,
      SERVICES: 'ingest',
      DATA_DIR: path.join(folder, 'ingest'),
    });
    servers.push(ingest);
    const sessions = await createSessions(ingest.url, USER, 50);
    const warmup = await drive({
      url: ingest.url,
      mode: 'single',
      durationMs: WARMUP_MS,
      connections: CLIENTS,
      sessions,
    });
    let peakRss = 0;
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssMb(ingest.child.pid!))), 500);
    const single = await drive({
      url: ingest.url,
      mode: 'single',
      durationMs: LOAD_MS,
      connections: CLIENTS,
      sessions,
    });
    clearInterval(sampler);
    metrics.push({
      name: 'ingest_single_events_per_s',
      value: single.events_per_s,
      unit: 'events/s',
      baseline: bareResult.events_per_s,
      ratio: ratioOf(single.events_per_s, bareResult.events_per_s),
      target: '>= 0.4',
    });
    metrics.push({ name: 'ingest_rss_mb', value: peakRss, unit: 'MiB' });

    say('ingest through Kafka: batches, and kafkajs sendBatch straight to the broker');
    const batch = await drive({
      url: ingest.url,
      mode: 'batch',
      durationMs: LOAD_MS,
      connections: BATCH_CLIENTS,
      batchSize: BATCH_SIZE,
      sessions,
    });
    const admin = createKafka(
      { brokers: [kafka.brokers], clientId: 'bench', groupId: 'bench', topicSuffix: '' },
      createLogger('error'),
    ).admin();
    await admin.connect();
    const rawTopics = topicSpecs('bench_raw');
    await ensureTopics(admin, rawTopics);
    await admin.disconnect();
    const raw = await runJson<{ events_per_s: number }>('bench/load/raw-kafka.ts', [
      JSON.stringify({
        brokers: kafka.brokers,
        topic: rawTopics.usage.name,
        durationMs: LOAD_MS,
        connections: BATCH_CLIENTS,
        batchSize: BATCH_SIZE,
      }),
    ]);
    metrics.push({
      name: 'ingest_batch_events_per_s',
      value: batch.events_per_s,
      unit: 'events/s',
      baseline: raw.events_per_s,
      ratio: ratioOf(batch.events_per_s, raw.events_per_s),
      target: '>= 0.5',
    });

    say('consumer: from Kafka to ClickHouse, priced');
    const stored = warmup.events + single.events + batch.events;
    const consumer = await startServer('services/main.ts', {
      ...services,
      SERVICES: 'consumer,query',
      DATA_DIR: path.join(folder, 'consumer'),
    });
    servers.push(consumer);
    let first: { at: number; count: number } | null = null;
    const deadline = Date.now() + 600_000;
    let count = 0;
    while (count < stored && Date.now() < deadline) {
      count = await eventCount(consumer.url, USER);
      if (first === null && count > 0) first = { at: performance.now(), count };
      await sleep(100);
    }
    if (count !== stored) throw new Error(`the consumer stored ${count} of ${stored} events`);
    const consumerRate = Math.round(((stored - first!.count) / (performance.now() - first!.at)) * 1000);
    const rawRows = Math.min(stored, 200_000);
    // The baseline inserts the rows the consumer stores (priced parts and all) as the consumer inserts
    // them; the synthetic rows of earlier runs are measured beside it, to compare with their figures.
    const rawInsertOf = (shape: 'consumer' | 'synthetic') =>
      runJson<{ rows_per_s: number }>(
        'bench/load/raw-insert.ts',
        [JSON.stringify({ rows: rawRows, batchSize: 10_000, shape })],
        { DATA_DIR: path.join(folder, `raw-insert-${shape}`), LOG_LEVEL: 'error' },
      );
    const rawInsert = await rawInsertOf('consumer');
    const rawSynthetic = await rawInsertOf('synthetic');
    metrics.push({
      name: 'consumer_rows_per_s',
      value: consumerRate,
      unit: 'rows/s',
      baseline: rawInsert.rows_per_s,
      ratio: ratioOf(consumerRate, rawInsert.rows_per_s),
      target: '>= 0.6',
    });

    say(
      `soak at half the single-event rate (${Math.round(single.events_per_s / 2)} events/s) for ${SOAK_MS / 1000} s, with freshness probes`,
    );
    const half = Math.max(1, Math.round(single.events_per_s / 2));
    const rss: number[] = [];
    const soakSampler = setInterval(() => rss.push(rssMb(ingest.child.pid!)), 5_000);
    const soak = drive({ url: ingest.url, mode: 'single', durationMs: SOAK_MS, connections: 16, rate: half, sessions });
    await sleep(2_000);
    const latencies = await freshness(ingest.url, consumer.url, PROBES);
    const soakResult = await soak;
    clearInterval(soakSampler);
    for (const p of [50, 95, 99])
      metrics.push({
        name: `e2e_freshness_p${p}_ms`,
        value: Math.round(percentile(latencies.visible, p)),
        unit: 'ms',
        ...(p === 95 ? { target: '<= 1000' } : p === 99 ? { target: '<= 1500' } : {}),
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
    await Promise.all([ingest.stop(), consumer.stop()]);

    say('the embedded npm start: single events');
    const embedded = await startServer('services/main.ts', { DATA_DIR: path.join(folder, 'embedded') });
    servers.push(embedded);
    const embeddedSessions = await createSessions(embedded.url, USER, 50);
    await drive({
      url: embedded.url,
      mode: 'single',
      durationMs: WARMUP_MS,
      connections: CLIENTS,
      sessions: embeddedSessions,
    });
    const embeddedResult = await drive({
      url: embedded.url,
      mode: 'single',
      durationMs: LOAD_MS,
      connections: CLIENTS,
      sessions: embeddedSessions,
    });
    metrics.push({
      name: 'embedded_single_events_per_s',
      value: embeddedResult.events_per_s,
      unit: 'events/s',
      baseline: bareResult.events_per_s,
      ratio: ratioOf(embeddedResult.events_per_s, bareResult.events_per_s),
      target: '>= 0.2',
    });
    const embeddedFew = await drive({
      url: embedded.url,
      mode: 'single',
      durationMs: LOAD_MS,
      connections: FEW_CLIENTS,
      sessions: embeddedSessions,
    });
    metrics.push({
      name: 'embedded_single_4_connections_events_per_s',
      value: embeddedFew.events_per_s,
      unit: 'events/s',
      baseline: bareFew.events_per_s,
      ratio: ratioOf(embeddedFew.events_per_s, bareFew.events_per_s),
      target: '>= 200 events/s',
    });
    metrics.push({
      name: 'embedded_single_4_connections_p50_ms',
      value: embeddedFew.p50_ms,
      unit: 'ms',
      baseline: bareFew.p50_ms,
      target: '<= 25',
    });
    await embedded.stop();

    say('noisy neighbour: a steady tenant beside one holding the most of every allowance');
    metrics.push(...(await noisyNeighbour(NOISY_NEIGHBOUR(folder))));
    say('budgets: storing beside a tenant holding its most budgets, and the alert latency');
    metrics.push(...(await budgetAlerts(BUDGETS(folder))));
    metrics.push({ name: 'bare_koa_requests_per_s', value: bareResult.events_per_s, unit: 'requests/s' });
    metrics.push({ name: 'bare_koa_4_connections_requests_per_s', value: bareFew.events_per_s, unit: 'requests/s' });
    metrics.push({ name: 'raw_kafka_send_batch_events_per_s', value: raw.events_per_s, unit: 'events/s' });
    metrics.push({ name: 'raw_clickhouse_insert_rows_per_s', value: rawInsert.rows_per_s, unit: 'rows/s' });
    metrics.push({
      name: 'raw_clickhouse_insert_synthetic_rows_per_s',
      value: rawSynthetic.rows_per_s,
      unit: 'rows/s',
      ratio: ratioOf(consumerRate, rawSynthetic.rows_per_s),
    });
  } finally {
    await Promise.allSettled(servers.map((server) => (server.child.exitCode === null ? server.stop() : undefined)));
    await backing.stop();
  }

  if (!CI) {
    say(
      `Redis memory: ${REDIS_EVENTS.toLocaleString('en-US')} usage events of ${REDIS_LIVE_SESSIONS} live calls through Kafka`,
    );
    metrics.push(...redisMemoryMetrics(await redisMemory(path.join(folder, 'redis-memory'), REDIS_EVENTS)));
  }

  say('pricing: one event by the five-entry card, and with the whole catalog loaded');
  const pricing = await runJson<{
    card_ns: number;
    card_with_catalog_ns: number;
    fleet_catalog_ns: number;
    fleet_unpriced: number;
  }>('bench/load/pricing.ts', [
    JSON.stringify(CI ? { rounds: 9, perRound: 10_000 } : { rounds: 15, perRound: 20_000 }),
  ]);
  if (pricing.fleet_unpriced !== 0)
    throw new Error(`the pricing benchmark's fleet mix has ${pricing.fleet_unpriced} unpriced event(s)`);
  const perEvent = (ns: number) => Math.round(ns) / 1000;
  metrics.push({ name: 'pricing_card_us_per_event', value: perEvent(pricing.card_ns), unit: 'µs' });
  metrics.push({
    name: 'pricing_card_with_catalog_us_per_event',
    value: perEvent(pricing.card_with_catalog_ns),
    unit: 'µs',
    baseline: perEvent(pricing.card_ns),
    ratio: ratioOf(pricing.card_with_catalog_ns, pricing.card_ns),
    target: '<= 1.2',
  });
  metrics.push({
    name: 'pricing_fleet_catalog_us_per_event',
    value: perEvent(pricing.fleet_catalog_ns),
    unit: 'µs',
    baseline: perEvent(pricing.card_ns),
    ratio: ratioOf(pricing.fleet_catalog_ns, pricing.card_ns),
    target: '<= 1.2',
  });

  say(`cost queries at ${QUERY_EVENTS.toLocaleString('en-US')} events`);
  await runInherited('bench/queries/run.ts', { BENCH_QUERIES_EVENTS: String(QUERY_EVENTS) });
  const queries = JSON.parse(
    readFileSync(path.join(ROOT, 'bench/results', queriesResultFile(QUERY_EVENTS)), 'utf8'),
  ) as { metrics: Metric[] };
  metrics.push(...queries.metrics.filter((m) => /_p95_ms_|_ratio_/.test(m.name)));

  const machine = describeMachine(CI ? 'ci' : 'full', started);
  const file = CI ? 'ci' : 'latest';
  const table = metricTable(metrics);
  writeResults(file, { machine, metrics }, table);
  say(`\n${table.join('\n')}\n\nwrote bench/results/${file}.json and ${file}.md in ${machine.duration_s} s`);
}

/** What bench/load/redis-memory.ts prints. */
interface RedisMemory {
  readonly events: number;
  readonly rows_per_s: number;
  readonly used_memory_before: number;
  readonly used_memory_after: number;
  /** As a quarter, a half, three quarters and all of the events were stored. */
  readonly used_memory_by_quarter: readonly number[];
  readonly used_memory_peak: number;
  readonly claims_after: number;
  readonly claims_at_most: number;
  readonly live_usage_entries_per_call_at_most: number;
}

function redisMemory(folder: string, events: number): Promise<RedisMemory> {
  return runJson<RedisMemory>('bench/load/redis-memory.ts', [
    JSON.stringify({ folder, events, live: REDIS_LIVE_SESSIONS }),
  ]);
}

/** Redis holds live state, not history: its memory after the events, against the 64 MiB it may take. */
function redisMemoryMetrics(run: RedisMemory): Metric[] {
  const mib = (bytes: number) => Math.round((bytes / 1_048_576) * 10) / 10;
  return [
    {
      name: 'redis_used_memory_after_usage_mib',
      value: mib(run.used_memory_after),
      unit: 'MiB',
      baseline: mib(run.used_memory_before),
      target: '< 64',
    },
    { name: 'redis_used_memory_peak_during_usage_mib', value: mib(run.used_memory_peak), unit: 'MiB' },
    { name: 'redis_used_memory_at_half_of_usage_mib', value: mib(run.used_memory_by_quarter[1] ?? 0), unit: 'MiB' },
    { name: 'redis_usage_claims_after', value: run.claims_after, unit: 'keys' },
    { name: 'redis_usage_claims_in_flight_at_most', value: run.claims_at_most, unit: 'keys' },
    { name: 'redis_memory_phase_events', value: run.events, unit: 'events' },
    { name: 'redis_memory_phase_rows_per_s', value: run.rows_per_s, unit: 'rows/s' },
  ];
}

await main();
