import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { LocalKafka } from '../../infra/local/kafka.ts';
import { LocalRedis } from '../../infra/local/redis.ts';
import { startKafkaContainer, startRedisContainer, type Provided } from './containers.ts';
import { dockerEngineAnswers } from './docker.ts';

export interface TestServices {
  readonly kafkaBrokers: string;
  readonly redisUrl: string;
  /** null: each test file runs the embedded ClickHouse engine in its own data folder. */
  readonly clickhouseUrl: string | null;
}

type Say = (line: string) => void;

/**
 * Services given by environment variables win; else testcontainers where a Docker engine
 * answers; else the real Kafka broker and redis-server started here from the project's files.
 */
export async function startTestServices(
  env: NodeJS.ProcessEnv,
  say: Say,
): Promise<TestServices & { stop: () => Promise<void> }> {
  const folder = await mkdtemp(path.join(os.tmpdir(), 'callmeter-test-'));
  const useDocker = (env.KAFKA_BROKERS === undefined || env.REDIS_URL === undefined) && (await dockerEngineAnswers());
  const kafka = await provide(
    'Kafka',
    env.KAFKA_BROKERS,
    useDocker ? startKafkaContainer : () => startLocalKafka(folder),
    say,
  );
  const redis = await provide(
    'Redis',
    env.REDIS_URL,
    useDocker ? startRedisContainer : () => startLocalRedis(folder),
    say,
  );
  return {
    kafkaBrokers: kafka.address,
    redisUrl: redis.address,
    clickhouseUrl: env.CLICKHOUSE_URL ?? null,
    stop: async () => {
      await Promise.allSettled([kafka.stop(), redis.stop()]);
      await rm(folder, { recursive: true, force: true });
    },
  };
}

async function provide(
  name: string,
  given: string | undefined,
  start: () => Promise<Provided>,
  say: Say,
): Promise<Provided> {
  if (given !== undefined && given !== '') {
    say(`${name}: using ${given} from the environment`);
    return { address: given, stop: async () => undefined };
  }
  const started = Date.now();
  const provided = await start();
  say(`${name}: started at ${provided.address} in ${Date.now() - started} ms`);
  return provided;
}

async function startLocalKafka(folder: string): Promise<Provided> {
  const kafka = await LocalKafka.create(path.join(folder, 'kafka'));
  await kafka.start();
  return { address: kafka.brokers, stop: () => kafka.stop() };
}

async function startLocalRedis(folder: string): Promise<Provided> {
  const redis = await LocalRedis.create(path.join(folder, 'redis'));
  await redis.start();
  return { address: redis.url, stop: () => redis.stop() };
}
