import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../../services/shared/config.ts';
import { Exact } from '../../services/shared/exact-decimal.ts';
import { createIdempotentProducer } from '../../services/shared/kafka/batching-producer.ts';
import { createKafka } from '../../services/shared/kafka/client.ts';
import { topicSpecs } from '../../services/shared/kafka/topics.ts';
import { createLogger } from '../../services/shared/logger.ts';
import { encodeRecord, makeEnvelope } from '../../services/domain/records/index.ts';
import { call } from '../support/api.ts';
import { startCallmeter, type CallmeterProcess } from '../support/callmeter-process.ts';
import { eventually, isolate, serviceEnv, testConfig } from '../support/harness.ts';
import { SteadyTenant } from '../support/steady-tenant.ts';
import { readTopic } from '../support/topic-messages.ts';

// Through Kafka: records that ingest would refuse, published past it (an older
// ingest, a replayed topic), reach the consumer. ClickHouse refuses some of them for what they hold
// ("Decimal value is too big"; an insert over more partitions than it takes): those must go to the dead
// letters while the rest, and every other tenant's usage after them, is stored; never a stall.

const MONTH_MS = 30.44 * 86_400_000;

/** A usage record as ingest would publish it, with whatever quantity and instant the test gives. */
function usageRecord(sessionId: string, user: string, quantity: string, occurredAt: Date) {
  const now = new Date();
  const payload = {
    event_id: randomUUID(),
    session_id: sessionId,
    user_id: user,
    agent_id: null,
    provider: 'resemble',
    event_type: 'tts_characters',
    model: null,
    quantity,
    input_tokens: null,
    output_tokens: null,
    reported_unit_cost: null,
    reported_total_cost: null,
    occurred_at: occurredAt.toISOString(),
    received_at: now.toISOString(),
  };
  return encodeRecord(makeEnvelope('usage', sessionId, payload, occurredAt, now, payload.event_id));
}

describe('poison usage records published past ingest, while a steady tenant posts through it', () => {
  const isolation = isolate('hostile-records');
  const config: Config = testConfig(isolation);
  let ingest: CallmeterProcess;
  let query: CallmeterProcess;

  beforeAll(async () => {
    ingest = await startCallmeter(
      serviceEnv(isolation, { SERVICES: 'ingest', DATA_DIR: `${isolation.dataDir}/ingest` }),
    );
    query = await startCallmeter(serviceEnv(isolation, { SERVICES: 'consumer,query' }));
  });

  afterAll(async () => {
    await Promise.allSettled([ingest?.stop(), query?.stop()]);
  });

  /**
   * Runs a steady tenant of its own through ingest while `publish` puts records on the topic past
   * ingest, for a few seconds after them; then all the tenant was answered 201 for must be stored.
   */
  async function steadyAround(user: string, publish: () => Promise<void>): Promise<void> {
    const session = await call<{ id: string }>(ingest.url, 'POST', '/api/sessions/', {
      room_name: `${user}-${randomUUID()}`,
      user_id: user,
      agent_id: `agent-${user}`,
    });
    const steady = new SteadyTenant(ingest.url, user, session.body.id);
    steady.start();
    try {
      await publish();
      // The tenant keeps posting behind the poison for a while: the consumer must reach those events too.
      await new Promise((resolve) => setTimeout(resolve, 3_000));
    } finally {
      await steady.stop();
    }
    expect(
      steady.requests.filter((request) => request.status < 200 || request.status >= 300 || request.ms >= 1000),
    ).toEqual([]);
    const stalled = () => `consumer log: ${query.output().slice(-1500)}`;
    await eventually(
      async () =>
        expect((await summary(user)).body, stalled()).toMatchObject({
          total_cost: steady.total.toFixed(),
          event_count: steady.events,
        }),
      30_000,
      250,
    );
  }

  async function publish(records: readonly ReturnType<typeof usageRecord>[]): Promise<void> {
    const producer = createIdempotentProducer(createKafka(config.kafka!, createLogger('silent')));
    await producer.connect();
    try {
      // One send, keyed by one session: one partition, so the consumer reads them as one batch.
      await producer.send({
        topic: topicSpecs(isolation.suffix).usage.name,
        acks: -1,
        messages: records.map(({ key, value, headers }) => ({ key, value, headers })),
      });
    } finally {
      await producer.disconnect();
    }
  }

  const summary = (user: string) =>
    call<{ total_cost: string; event_count: number }>(query.url, 'GET', '/api/costs/summary', undefined, {
      'x-user-id': user,
    });
  const deadLetters = async () =>
    (await readTopic(createKafka(config.kafka!, createLogger('silent')), topicSpecs(isolation.suffix).dlq.name)).map(
      (m) => JSON.parse(m.value!.toString()) as { payload: { user_id: string } },
    );

  it('stores each of 110 records a month apart in one batch, in parts of months one insert takes, and keeps storing the other tenants', async () => {
    const session = randomUUID();
    const instants = Array.from({ length: 110 }, (_, i) => new Date(Date.now() - 60_000 - i * MONTH_MS));
    await steadyAround('tenant-steady-1', () =>
      publish(instants.map((at) => usageRecord(session, 'tenant-months', '1', at))),
    );
    // 'Too many partitions for single INSERT block' blames the insert, not a record: halves of it are stored.
    expect((await deadLetters()).filter((record) => record.payload.user_id === 'tenant-months')).toEqual([]);
    // The rate of resemble starts on 2024-01-01: the months before it are stored unpriced, at 0.
    const priced = instants.filter((at) => at >= new Date('2024-01-01T00:00:00Z')).length;
    expect((await summary('tenant-months')).body).toMatchObject({
      event_count: 110,
      total_cost: new Exact('0.00004').times(priced).toFixed(),
    });
  }, 90_000);

  it('dead-letters a quantity of 10^25 ("Decimal value is too big") and stores the records beside it and after it', async () => {
    const session = randomUUID();
    const records = [
      usageRecord(session, 'tenant-huge', '1', new Date()),
      usageRecord(session, 'tenant-huge', '1' + '0'.repeat(25), new Date()),
      usageRecord(session, 'tenant-huge', '2', new Date()),
    ];
    await steadyAround('tenant-steady-2', () => publish(records));
    expect((await deadLetters()).filter((record) => record.payload.user_id === 'tenant-huge').length).toBe(1);
    expect((await summary('tenant-huge')).body).toMatchObject({ event_count: 2, total_cost: '0.00012' });
  }, 90_000);

  it('stays healthy and ready', async () => {
    for (const process of [ingest, query]) {
      for (const path of ['/healthz', '/readyz'])
        expect([path, (await fetch(`${process.url}${path}`)).status]).toEqual([path, 200]);
    }
  });
});
