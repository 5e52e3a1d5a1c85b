import path from 'node:path';
import type { BenchSettings } from '../settings.ts';
import { startBackingServices } from '../support/backing-services.ts';
import { createSessions } from '../support/callmeter-api.ts';
import { drive, say, startServer, type Server } from '../support/processes.ts';
import type { SteadyMetric } from '../support/results.ts';
import { combineRounds, inRounds } from '../support/rounds.ts';
import { consumerRounds, type ConsumerRounds } from './consumer.ts';
import { CLIENTS, ingestRound, rawTopic } from './kafka-ingest.ts';
import { kafkaOneProcess } from './kafka-one-process.ts';
import { soak } from './soak.ts';

const USER = 'bench';

/**
 * The Kafka path, over a broker and redis-server of the run's own: ingest's rounds (each beside the bare
 * route and sendBatch), then the consumer's rounds (each draining the whole backlog the ingest rounds
 * left, beside a raw insert), then the soak, once, on the last round's consumer; then the one-process
 * shape over the same broker and Redis (ingest, consumer and query in one `npm start`).
 */
export async function kafkaPath(folder: string, settings: BenchSettings, bare: Server): Promise<SteadyMetric[]> {
  say('starting the Kafka broker and redis-server');
  const backing = await startBackingServices(folder, 'bench');
  let ingest: Server | undefined;
  let consumers: ConsumerRounds | undefined;
  try {
    ingest = await startServer('services/main.ts', {
      ...backing.env,
      SERVICES: 'ingest',
      DATA_DIR: path.join(folder, 'ingest'),
    });
    const sessions = await createSessions(ingest.url, USER, 50);
    say('ingest through Kafka: warming up');
    const warmup = await drive({
      url: ingest.url,
      mode: 'single',
      durationMs: settings.warmupMs,
      connections: CLIENTS,
      sessions,
    });
    const round = {
      bare,
      ingest,
      sessions,
      brokers: backing.kafka.brokers,
      rawTopic: await rawTopic(backing.kafka.brokers),
      loadMs: settings.loadMs,
      acknowledged: { events: warmup.events },
    };
    const ingested = await inRounds(settings.runs, () => ingestRound(round));

    const drains = consumerRounds({ folder, services: backing.env, user: USER, backlog: round.acknowledged.events });
    consumers = drains;
    const consumed = await inRounds(settings.runs, (index) => drains.round(index));

    const soaked = await soak({
      ingest,
      consumer: drains.consumer!,
      sessions,
      singleEventsPerS: ingested.find((m) => m.name === 'ingest_single_events_per_s')!.value,
      soakMs: settings.soakMs,
      probes: settings.probes,
    });
    await Promise.allSettled([ingest.stop(), drains.consumer?.stop()]);
    const oneProcess = await kafkaOneProcess({
      folder,
      services: backing.env,
      bare,
      runs: settings.runs,
      warmupMs: settings.warmupMs,
      loadMs: settings.loadMs,
    });
    return [...ingested, ...consumed, ...combineRounds([soaked]), ...oneProcess];
  } finally {
    await Promise.allSettled([ingest?.stop(), consumers?.consumer?.stop()]);
    await backing.stop();
  }
}
