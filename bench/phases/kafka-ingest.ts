import { createKafka } from '../../services/shared/kafka/client.ts';
import { ensureTopics, topicSpecs } from '../../services/shared/kafka/topics.ts';
import { createLogger } from '../../services/shared/logger.ts';
import type { BenchSession } from '../support/callmeter-api.ts';
import { drive, rssMb, runJson, say, type Server } from '../support/processes.ts';
import { ratioOf, type Metric } from '../support/results.ts';

/**
 * Ingest through Kafka, one round: the bare Koa route, then single events through ingest at the same
 * 64 connections, then batches of 500 through ingest, then kafkajs sendBatch straight to the broker at
 * the same 8 connections; each figure beside the baseline measured just before it.
 */
export interface IngestRound {
  readonly bare: Server;
  readonly ingest: Server;
  readonly sessions: readonly BenchSession[];
  readonly brokers: string;
  /** The topic of the sendBatch baseline (rawTopic makes it). */
  readonly rawTopic: string;
  readonly loadMs: number;
  /** Events ingest acknowledged so far: the backlog the consumer drains. Each round adds its own. */
  readonly acknowledged: { events: number };
}

export const CLIENTS = 64;
const BATCH_CLIENTS = 8;
const BATCH_SIZE = 500;

export async function ingestRound(round: IngestRound): Promise<Metric[]> {
  const { bare, ingest, sessions, loadMs } = round;
  say('ingest through Kafka: the bare Koa route, then single events');
  const bareResult = await drive({
    url: bare.url,
    mode: 'bare',
    durationMs: loadMs,
    connections: CLIENTS,
    sessions: [{ id: 'x', user_id: 'x' }],
  });
  let peakRss = 0;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssMb(ingest.child.pid!))), 500);
  const single = await drive({ url: ingest.url, mode: 'single', durationMs: loadMs, connections: CLIENTS, sessions });
  clearInterval(sampler);

  say('ingest through Kafka: batches, then kafkajs sendBatch straight to the broker');
  const batch = await drive({
    url: ingest.url,
    mode: 'batch',
    durationMs: loadMs,
    connections: BATCH_CLIENTS,
    batchSize: BATCH_SIZE,
    sessions,
  });
  const raw = await runJson<{ events_per_s: number }>('bench/load/raw-kafka.ts', [
    JSON.stringify({
      brokers: round.brokers,
      topic: round.rawTopic,
      durationMs: loadMs,
      connections: BATCH_CLIENTS,
      batchSize: BATCH_SIZE,
    }),
  ]);
  round.acknowledged.events += single.events + batch.events;
  return [
    {
      name: 'ingest_single_events_per_s',
      value: single.events_per_s,
      unit: 'events/s',
      baseline: bareResult.events_per_s,
      ratio: ratioOf(single.events_per_s, bareResult.events_per_s),
      target: '>= 0.5',
    },
    { name: 'ingest_rss_mb', value: peakRss, unit: 'MiB' },
    {
      name: 'ingest_batch_events_per_s',
      value: batch.events_per_s,
      unit: 'events/s',
      baseline: raw.events_per_s,
      ratio: ratioOf(batch.events_per_s, raw.events_per_s),
      target: '>= 0.6',
    },
    { name: 'bare_koa_requests_per_s', value: bareResult.events_per_s, unit: 'requests/s' },
    { name: 'raw_kafka_send_batch_events_per_s', value: raw.events_per_s, unit: 'events/s' },
  ];
}

/** Makes the topics of the sendBatch baseline beside callmeter's; the name of its usage topic. */
export async function rawTopic(brokers: string): Promise<string> {
  const admin = createKafka(
    { brokers: [brokers], clientId: 'bench', groupId: 'bench', topicSuffix: '' },
    createLogger('error'),
  ).admin();
  await admin.connect();
  const topics = topicSpecs('bench_raw');
  await ensureTopics(admin, topics);
  await admin.disconnect();
  return topics.usage.name;
}
