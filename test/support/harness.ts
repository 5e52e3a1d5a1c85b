import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Redis } from 'ioredis';
import { inject } from 'vitest';
import { loadConfig, type Config } from '../../services/shared/config.ts';

export interface Isolation {
  readonly suffix: string;
  readonly database: string;
  readonly keyPrefix: string;
  readonly dataDir: string;
}

/** Each integration file gets its own ClickHouse database, topic suffix, Redis key prefix and data folder. */
export function isolate(label: string): Isolation {
  const suffix = `${label.replace(/[^A-Za-z0-9]/g, '_')}_${randomBytes(4).toString('hex')}`;
  return {
    suffix,
    database: `test_${suffix}`,
    keyPrefix: `test:${suffix}:`,
    dataDir: mkdtempSync(path.join(os.tmpdir(), `callmeter-${label}-`)),
  };
}

/** The environment a callmeter process of this test file would be started with. */
export function serviceEnv(isolation: Isolation, overrides: Record<string, string> = {}): Record<string, string> {
  const services = inject('services');
  return {
    KAFKA_BROKERS: services.kafkaBrokers,
    KAFKA_TOPIC_SUFFIX: isolation.suffix,
    KAFKA_GROUP_ID: `callmeter-${isolation.suffix}`,
    REDIS_URL: services.redisUrl,
    REDIS_KEY_PREFIX: isolation.keyPrefix,
    ...(services.clickhouseUrl === null ? {} : { CLICKHOUSE_URL: services.clickhouseUrl }),
    CLICKHOUSE_DATABASE: isolation.database,
    DATA_DIR: isolation.dataDir,
    LOG_LEVEL: 'warn',
    ...overrides,
  };
}

/**
 * The two shapes of one callmeter process a case runs on: embedded, and over Kafka and Redis. (An ingest
 * apart from its consumer reads stored usage only through a ClickHouse server, CLICKHOUSE_URL, which
 * the machine has not: hostile-modes.ts runs the cases that need no stored reads apart.)
 */
export function oneProcessModes(label: string) {
  return [
    { name: 'the embedded process', env: () => ({ DATA_DIR: isolate(label).dataDir, LOG_LEVEL: 'warn' }) },
    { name: 'one process over Kafka and Redis', env: () => serviceEnv(isolate(`${label}-kafka`)) },
  ] as const;
}

export function testConfig(isolation: Isolation, overrides: Record<string, string> = {}): Config {
  return loadConfig(serviceEnv(isolation, overrides));
}

export { eventually } from './eventually.ts';

/** Deletes this file's Redis keys only (a FLUSHDB would wipe the other files' keys too). */
export async function flushPrefix(redis: Redis, prefix: string): Promise<number> {
  let cursor = '0';
  let deleted = 0;
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
    if (keys.length > 0) deleted += await redis.del(...keys);
    cursor = next;
  } while (cursor !== '0');
  return deleted;
}
