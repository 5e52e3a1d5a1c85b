import path from 'node:path';
import { createSessions } from '../support/callmeter-api.ts';
import { singleEventsBesideBare } from '../support/beside-bare.ts';
import { drive, say, startServer, type Server } from '../support/processes.ts';
import { ratioOf, type Metric, type SteadyMetric } from '../support/results.ts';
import { inRounds } from '../support/rounds.ts';
import { CLIENTS } from './kafka-ingest.ts';

/**
 * `npm start` with KAFKA_BROKERS and REDIS_URL: ingest, consumer and query in one process over the run's
 * broker and Redis (topics and group of its own, so that it stores only what it is sent), as a small
 * deployment runs it. Each round: the bare route at 64 connections, this process at 64, the bare route
 * at 4, this process at 4; each figure beside the baseline measured just before it.
 */
export interface OneProcessContext {
  readonly folder: string;
  /** The broker and Redis of the run (startBackingServices's env). */
  readonly services: Record<string, string>;
  readonly bare: Server;
  readonly runs: number;
  readonly warmupMs: number;
  readonly loadMs: number;
}

export async function kafkaOneProcess(context: OneProcessContext): Promise<SteadyMetric[]> {
  const { bare, loadMs } = context;
  const server = await startServer('services/main.ts', {
    ...context.services,
    KAFKA_TOPIC_SUFFIX: 'one_process',
    KAFKA_GROUP_ID: 'bench-one-process',
    DATA_DIR: path.join(context.folder, 'one-process'),
  });
  try {
    const sessions = await createSessions(server.url, 'bench-one-process', 50);
    say('one process over Kafka and Redis: warming up');
    await drive({ url: server.url, mode: 'single', durationMs: context.warmupMs, connections: CLIENTS, sessions });
    return await inRounds(context.runs, async (): Promise<Metric[]> => {
      const { bareMany, many, bareFew, few } = await singleEventsBesideBare(
        'one process over Kafka and Redis',
        bare,
        server.url,
        sessions,
        loadMs,
      );
      return [
        {
          name: 'ingest_one_process_kafka_events_per_s',
          value: many.events_per_s,
          unit: 'events/s',
          baseline: bareMany.events_per_s,
          ratio: ratioOf(many.events_per_s, bareMany.events_per_s),
        },
        {
          name: 'ingest_one_process_kafka_4_connections_events_per_s',
          value: few.events_per_s,
          unit: 'events/s',
          baseline: bareFew.events_per_s,
          ratio: ratioOf(few.events_per_s, bareFew.events_per_s),
        },
        { name: 'ingest_one_process_kafka_4_connections_p50_ms', value: few.p50_ms, unit: 'ms' },
      ];
    });
  } finally {
    await server.stop();
  }
}
