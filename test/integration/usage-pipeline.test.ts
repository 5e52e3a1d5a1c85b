import { randomUUID } from 'node:crypto';
import type { IHeaders } from 'kafkajs';
import { Exact } from '../../services/shared/exact-decimal.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClickHouse } from '../../services/shared/clickhouse/client.ts';
import { createIdempotentProducer } from '../../services/shared/kafka/batching-producer.ts';
import { createKafka } from '../../services/shared/kafka/client.ts';
import { topicSpecs } from '../../services/shared/kafka/topics.ts';
import { createLogger } from '../../services/shared/logger.ts';
import { call } from '../support/api.ts';
import { startCallmeter, type CallmeterProcess } from '../support/callmeter-process.ts';
import { drained } from '../support/drained.ts';
import { eventually, isolate, serviceEnv, testConfig } from '../support/harness.ts';
import { expectedTotals, expectSessionsCountedOnce, storedTotals } from '../support/rollups.ts';
import { readTopic } from '../support/topic-messages.ts';

const SESSIONS = 20;
const EVENTS = 3_000;
const RESENT = 400;
const TTS_RATE = new Exact('0.00004');

function makeUsageEvent(sessionId: string, i: number) {
  return {
    session_id: sessionId,
    user_id: 'tenant-1',
    provider: 'Resemble',
    event_type: 'tts_characters',
    event_id: randomUUID(),
    usage_data: { character_count: 1 + (i % 997) },
  };
}

describe('usage events through real Kafka, Redis and the ClickHouse engine', () => {
  const isolation = isolate('usage');
  const config = testConfig(isolation);
  let ingest: CallmeterProcess;
  let consumer: CallmeterProcess;

  beforeAll(async () => {
    // Ingest and consumer run apart, each with its own embedded engine: the consumer's holds the usage.
    ingest = await startCallmeter(
      serviceEnv(isolation, { SERVICES: 'ingest', DATA_DIR: `${isolation.dataDir}/ingest` }),
    );
    consumer = await startCallmeter(serviceEnv(isolation, { SERVICES: 'consumer' }));
  });

  afterAll(async () => {
    await Promise.allSettled([ingest?.stop(), consumer?.stop()]);
  });

  it('stores every accepted event once, priced exactly, through retries, poison and repeated kill -9, and publishes the poison to the DLQ topic with its origin', async () => {
    const sessions = await Promise.all(
      Array.from(
        { length: SESSIONS },
        async (_, i) =>
          (
            await call<{ id: string }>(ingest.url, 'POST', '/api/sessions/', {
              room_name: `room-${i}`,
              user_id: 'tenant-1',
              agent_id: `agent-${i % 3}`,
            })
          ).body.id,
      ),
    );
    const events = Array.from({ length: EVENTS }, (_, i) => makeUsageEvent(sessions[i % SESSIONS]!, i));
    const expected = events.reduce((sum, e) => sum.plus(TTS_RATE.times(e.usage_data.character_count)), new Exact(0));
    const resends = events.slice(0, RESENT);

    const batches = [...chunks(events, 250), ...chunks(resends, 100)];
    let kills = 0;
    for (const [n, batch] of batches.entries()) {
      const answer = await call<{ status: string }[]>(ingest.url, 'POST', '/api/usage/events/batch', batch);
      expect(answer.status).toBe(200);
      expect(answer.body.filter((item) => item.status !== 'accepted')).toEqual([]);
      if (n === 3 || n === 8) {
        await consumer.stop('SIGKILL');
        kills += 1;
        consumer = await startCallmeter(serviceEnv(isolation, { SERVICES: 'consumer' }));
      }
    }
    const kafka = createKafka(config.kafka!, createLogger('silent'));
    const producer = createIdempotentProducer(kafka);
    await producer.connect();
    const topics = topicSpecs(isolation.suffix);
    const poison = '{"schema_version":1,"kind":"usage"}';
    const [placed] = await producer.send({
      topic: topics.usage.name,
      acks: -1,
      messages: [{ key: 'poison', value: poison }],
    });
    await producer.disconnect();

    await drained(config, 'usage', 60_000);
    const dead = await readTopic(kafka, topics.dlq.name);
    expect(
      dead.map((m) => ({ key: m.key?.toString(), value: m.value?.toString(), headers: textHeaders(m.headers) })),
    ).toEqual([
      {
        key: 'poison',
        value: poison,
        headers: {
          reason: "invalid envelope: / must have required property 'id'",
          topic: topics.usage.name,
          partition: String(placed!.partition),
          offset: placed!.baseOffset,
        },
      },
    ]);
    expect(await consumer.stop('SIGTERM')).toBe(0);
    expect(kills).toBe(2);

    const ch = await createClickHouse(config);
    const one = async (sql: string) =>
      (await (await ch.client.query({ query: sql, format: 'JSONEachRow' })).json<Record<string, string>>())[0]!;
    const db = ch.database;
    expect(await one(`SELECT count() AS n, uniqExact(id) AS ids, sum(cost) AS cost FROM ${db}.usage_events`)).toEqual({
      n: String(EVENTS),
      ids: String(EVENTS),
      cost: expected.toFixed(),
    });
    expect(await storedTotals(ch)).toEqual(expectedTotals(EVENTS, expected.toFixed()));
    await expectSessionsCountedOnce(ch);
    expect(await one(`SELECT DISTINCT provider, service, unit, cost_source FROM ${db}.usage_events`)).toEqual({
      provider: 'resemble',
      service: 'tts',
      unit: 'character',
      cost_source: 'computed',
    });
    expect(await one(`SELECT count() AS n FROM ${db}.dead_letters WHERE topic LIKE '%usage%'`)).toEqual({ n: '1' });
    await ch.client.close();
    consumer = await startCallmeter(serviceEnv(isolation, { SERVICES: 'consumer' }));
    await eventually(async () => expect((await fetch(`${consumer.url}/readyz`)).status).toBe(200));
  }, 240_000);
});

function textHeaders(headers: IHeaders | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(headers ?? {}).map(([name, value]) => [name, String(value)]));
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  return Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size));
}
