import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClickHouse } from '../../services/shared/clickhouse/client.ts';
import { BatchingProducer, createIdempotentProducer } from '../../services/shared/kafka/batching-producer.ts';
import { createKafka } from '../../services/shared/kafka/client.ts';
import { ensureTopics, topicSpecs } from '../../services/shared/kafka/topics.ts';
import { createLogger } from '../../services/shared/logger.ts';
import { encodeRecord } from '../../services/domain/records/index.ts';
import { startCallmeter, type CallmeterProcess } from '../support/callmeter-process.ts';
import { eventually, isolate, serviceEnv, testConfig } from '../support/harness.ts';
import { makeSessionEnvelope } from '../support/records.ts';

const GOOD = 12_000;
const POISON = 600;

describe('the record path through the real broker', () => {
  const isolation = isolate('records');
  const config = testConfig(isolation);
  const log = createLogger('warn');
  const kafka = createKafka(config.kafka!, log);
  const topics = topicSpecs(isolation.suffix);
  const admin = kafka.admin();
  const producer = createIdempotentProducer(kafka);

  beforeAll(async () => {
    await admin.connect();
    await ensureTopics(admin, topics);
    await producer.connect();
  });

  afterAll(async () => {
    await Promise.allSettled([producer.disconnect(), admin.disconnect()]);
  });

  async function committedTotal(): Promise<number> {
    const [offsets] = await admin.fetchOffsets({ groupId: config.kafka!.groupId, topics: [topics.sessions.name] });
    return (offsets?.partitions ?? []).reduce((sum, p) => sum + Math.max(0, Number(p.offset)), 0);
  }

  it('stores every record once and dead-letters poison once, across repeated kill -9 of the consumer', async () => {
    const publisher = new BatchingProducer(producer, log);
    const env = serviceEnv(isolation, { SERVICES: 'consumer' });
    let consumer: CallmeterProcess = await startCallmeter(env);
    const waves = 4;
    for (let wave = 0; wave < waves; wave++) {
      const before = await committedTotal();
      const good = Array.from({ length: GOOD / waves }, (_, i) => makeSessionEnvelope({ user_id: `user-${i % 7}` }));
      const poison = Array.from({ length: POISON / waves }, (_, i) => ({
        key: `poison-${wave}-${i}`,
        value: Buffer.from(i % 2 ? '{"not":"an envelope"}' : 'not json'),
        headers: { kind: 'session' },
      }));
      const published = Promise.all([
        publisher.publish(topics.sessions.name, good.map(encodeRecord)),
        publisher.publish(topics.sessions.name, poison),
      ]);
      if (wave === waves - 1) {
        await published;
        break;
      }
      // Kill the consumer as soon as it has committed part of this wave, then restart it.
      await eventually(async () => expect(await committedTotal()).toBeGreaterThan(before), 30_000, 10);
      await consumer.stop('SIGKILL');
      await published;
      consumer = await startCallmeter(env);
    }
    await eventually(async () => expect(await committedTotal()).toBe(GOOD + POISON), 60_000);
    expect(await consumer.stop('SIGTERM')).toBe(0);

    const ch = await createClickHouse(config);
    const query = async (sql: string) =>
      (await ch.client.query({ query: sql, format: 'JSONEachRow' })).json<Record<string, string>>();
    const [sessions] = await query(`SELECT count() AS n, uniqExact(id) AS ids FROM ${ch.database}.sessions`);
    expect(sessions).toEqual({ n: String(GOOD), ids: String(GOOD) });
    const [dead] = await query(
      `SELECT count() AS n, uniqExact(kafka_partition, kafka_offset) AS places FROM ${ch.database}.dead_letters`,
    );
    expect(dead).toEqual({ n: String(POISON), places: String(POISON) });
    const reasons = await query(`SELECT DISTINCT reason FROM ${ch.database}.dead_letters ORDER BY reason`);
    expect(reasons.map((r) => r.reason)).toEqual([
      "invalid envelope: / must have required property 'schema_version'",
      'record value is not JSON',
    ]);
    await ch.client.close();
  }, 180_000);
});
