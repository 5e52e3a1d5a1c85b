import path from 'node:path';
import { LocalKafka } from '../../infra/local/kafka.ts';
import { LocalRedis } from '../../infra/local/redis.ts';

/** The Kafka broker and redis-server a benchmark starts for itself, and the environment that points at them. */
export interface BackingServices {
  readonly kafka: LocalKafka;
  readonly redis: LocalRedis;
  readonly env: { KAFKA_BROKERS: string; REDIS_URL: string; KAFKA_GROUP_ID: string };
  stop(): Promise<void>;
}

export async function startBackingServices(
  folder: string,
  groupId: string,
  redisOptions: { maxmemory?: string } = {},
): Promise<BackingServices> {
  const kafka = await LocalKafka.create(path.join(folder, 'kafka'));
  const redis = await LocalRedis.create(path.join(folder, 'redis'), redisOptions);
  await Promise.all([kafka.start(), redis.start()]);
  return {
    kafka,
    redis,
    env: { KAFKA_BROKERS: kafka.brokers, REDIS_URL: redis.url, KAFKA_GROUP_ID: groupId },
    stop: async () => {
      await Promise.allSettled([kafka.stop(), redis.stop()]);
    },
  };
}
