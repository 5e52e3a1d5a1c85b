import type { Kafka } from 'kafkajs';
import { createClickHouse, createReadClickHouse, type ClickHouse } from './clickhouse/client.ts';
import { migrate } from './clickhouse/migrate.ts';
import { markEngineOpen } from './clickhouse/open-marker.ts';
import type { Config } from './config.ts';
import type { DependencyCheck } from './http/health.ts';
import { createKafka } from './kafka/client.ts';
import { ensureTopics, topicSpecs, type TopicKey, type TopicSpec } from './kafka/topics.ts';
import type { Shutdown } from './lifecycle.ts';
import type { Logger } from './logger.ts';
import { createRedis, type Redis } from './redis/client.ts';

export interface Infrastructure {
  /** Writes (the consumer) and migrations. */
  readonly clickhouse: ClickHouse;
  /**
   * Cost queries: a client of their own with the read limits; embedded, CLICKHOUSE_READ_CONNECTIONS
   * connections of their own, so that concurrent dashboards' queries run side by side.
   */
  readonly clickhouseReads: ClickHouse;
  /**
   * The reads on the ingest path (session and number history, stored-id lookups), under the same limits.
   * Embedded, a third connection: one chdb connection runs one statement at a time, so on the cost
   * queries' connection a heavy dashboard query would hold up ingest. Over HTTP, the read client.
   */
  readonly clickhouseIngestReads: ClickHouse;
  /** null in the embedded mode (no KAFKA_BROKERS): records go straight from ingest to the writer. */
  readonly kafka: { readonly client: Kafka; readonly topics: Readonly<Record<TopicKey, TopicSpec>> } | null;
  /** null in the embedded mode (no REDIS_URL): live state stays in this process's memory. */
  readonly redis: Redis | null;
  readonly checks: readonly DependencyCheck[];
  readonly clickhouseRecovery: ClickHouseRecovery;
}

export interface ClickHouseRecovery {
  /**
   * The embedded engine's previous process ended without closing it (SIGKILL, crash), or without
   * repairing what such an end may have left: an insert it was running may have left a materialized
   * view out of step with its source. Always false over HTTP.
   */
  readonly uncleanBefore: boolean;
  /** Called by the process that repaired it (rebuilt the views): a clean close may then clear the marker. */
  readonly repaired: () => void;
}

/**
 * Builds and connects the clients this process's configuration asks for, applies the ClickHouse
 * migrations and creates missing Kafka topics, and registers each client with the shutdown.
 */
export async function connectInfrastructure(config: Config, log: Logger, shutdown: Shutdown): Promise<Infrastructure> {
  const clickhouse = await createClickHouse(config);
  const marker = clickhouse.embedded ? markEngineOpen(config.dataDir) : null;
  // The marker stays after a crash until a process repaired its effects (a process without the
  // writer, or one stopped in the middle of the repair, leaves it for the next), and it goes only
  // once the engine closed without an error.
  let repaired = marker === null || !marker.uncleanBefore;
  shutdown.add('clickhouse', async () => {
    await clickhouse.client.close();
    if (marker !== null && repaired) marker.closed();
  });
  await migrate(clickhouse, log.child({ component: 'migrations' }));
  const clickhouseReads = await createReadClickHouse(config, clickhouse, config.clickhouse.readConnections);
  shutdown.add('clickhouse-reads', () => clickhouseReads.client.close());
  const clickhouseIngestReads = clickhouse.embedded ? await createReadClickHouse(config, clickhouse) : clickhouseReads;
  if (clickhouseIngestReads !== clickhouseReads)
    shutdown.add('clickhouse-ingest-reads', () => clickhouseIngestReads.client.close());
  const checks: DependencyCheck[] = [
    {
      name: 'clickhouse',
      check: async () => {
        const ping = await clickhouse.client.ping();
        if (!ping.success) throw ping.error;
      },
    },
  ];

  let kafka: Infrastructure['kafka'] = null;
  if (config.kafka !== null) {
    const client = createKafka(config.kafka, log);
    const admin = client.admin();
    await admin.connect();
    shutdown.add('kafka-admin', () => admin.disconnect());
    const topics = topicSpecs(config.kafka.topicSuffix);
    await ensureTopics(admin, topics);
    checks.push({ name: 'kafka', check: async () => void (await admin.describeCluster()) });
    kafka = { client, topics };
  }

  let redis: Redis | null = null;
  if (config.redis !== null) {
    const client = createRedis(config.redis);
    await client.connect();
    shutdown.add('redis', async () => void (await client.quit()));
    checks.push({ name: 'redis', check: async () => void (await client.ping()) });
    redis = client;
  }
  const clickhouseRecovery = { uncleanBefore: marker?.uncleanBefore ?? false, repaired: () => void (repaired = true) };
  return { clickhouse, clickhouseReads, clickhouseIngestReads, kafka, redis, checks, clickhouseRecovery };
}
