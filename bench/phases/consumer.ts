import path from 'node:path';
import { eventCount } from '../support/callmeter-api.ts';
import { runJson, say, sleep, startServer, type Server } from '../support/processes.ts';
import { ratioOf, type Metric } from '../support/results.ts';

/**
 * The consumer, one round: a consumer+query process of a fresh group (KAFKA_GROUP_ID) over a fresh
 * engine drains, from the beginning, the backlog the ingest rounds left (Kafka to ClickHouse, priced);
 * then the baseline, a raw insert of the rows the consumer stores (bench/load/raw-insert.ts), and the
 * synthetic rows of earlier runs beside it. Each round's process is stopped when the next one starts;
 * the last is left running (`consumer`) for the soak.
 */
export interface ConsumerRounds {
  round(index: number): Promise<Metric[]>;
  /** The last round's process, still running. */
  readonly consumer: Server | undefined;
}

export interface ConsumerContext {
  readonly folder: string;
  /** The broker and Redis of the run (startBackingServices's env). */
  readonly services: Record<string, string>;
  readonly user: string;
  /** Events the ingest rounds acknowledged: every round's process must store them all. */
  readonly backlog: number;
}

const DRAIN_LIMIT_MS = 600_000;

export function consumerRounds(context: ConsumerContext): ConsumerRounds {
  let running: Server | undefined;
  return {
    get consumer() {
      return running;
    },
    round: async (index) => {
      await running?.stop();
      running = undefined;
      say(
        `consumer: draining the backlog of ${context.backlog.toLocaleString('en-US')} events, from Kafka to ClickHouse`,
      );
      running = await startServer('services/main.ts', {
        ...context.services,
        KAFKA_GROUP_ID: `${context.services.KAFKA_GROUP_ID ?? 'bench'}-${index}`,
        SERVICES: 'consumer,query',
        DATA_DIR: path.join(context.folder, `consumer-${index}`),
      });
      const consumerRate = await drainRate(running.url, context.user, context.backlog);
      const rows = Math.min(context.backlog, 200_000);
      // The baseline inserts the rows the consumer stores (priced parts and all) as the consumer inserts
      // them; the synthetic rows of earlier runs are measured beside it, to compare with their figures.
      // A fresh engine each: the same deduplication tokens in one engine would be dropped as repeats.
      const rawInsertOf = (shape: 'consumer' | 'synthetic') =>
        runJson<{ rows_per_s: number }>(
          'bench/load/raw-insert.ts',
          [JSON.stringify({ rows, batchSize: 10_000, shape })],
          { DATA_DIR: path.join(context.folder, `raw-insert-${shape}-${index}`), LOG_LEVEL: 'error' },
        );
      const rawInsert = await rawInsertOf('consumer');
      const rawSynthetic = await rawInsertOf('synthetic');
      return [
        {
          name: 'consumer_rows_per_s',
          value: consumerRate,
          unit: 'rows/s',
          baseline: rawInsert.rows_per_s,
          ratio: ratioOf(consumerRate, rawInsert.rows_per_s),
          target: '>= 0.6',
        },
        { name: 'raw_clickhouse_insert_rows_per_s', value: rawInsert.rows_per_s, unit: 'rows/s' },
        {
          name: 'raw_clickhouse_insert_synthetic_rows_per_s',
          value: rawSynthetic.rows_per_s,
          unit: 'rows/s',
          ratio: ratioOf(consumerRate, rawSynthetic.rows_per_s),
        },
      ];
    },
  };
}

/** Rows stored per second, from the first the summary counts to the last of the backlog. */
async function drainRate(url: string, user: string, backlog: number): Promise<number> {
  let first: { at: number; count: number } | null = null;
  const deadline = Date.now() + DRAIN_LIMIT_MS;
  let count = 0;
  while (count < backlog && Date.now() < deadline) {
    count = await eventCount(url, user);
    if (first === null && count > 0) first = { at: performance.now(), count };
    await sleep(100);
  }
  if (count !== backlog) throw new Error(`the consumer stored ${count} of ${backlog} events`);
  return Math.round(((backlog - first!.count) / (performance.now() - first!.at)) * 1000);
}
