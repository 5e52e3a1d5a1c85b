import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../../services/shared/config.ts';
import { Exact } from '../../services/shared/exact-decimal.ts';
import { createIdempotentProducer } from '../../services/shared/kafka/batching-producer.ts';
import { createKafka } from '../../services/shared/kafka/client.ts';
import { topicSpecs } from '../../services/shared/kafka/topics.ts';
import { createLogger } from '../../services/shared/logger.ts';
import { encodeRecord, makeEnvelope } from '../../services/shared/records/envelope.ts';
import { call } from '../support/api.ts';
import { startCallmeter, type CallmeterProcess } from '../support/callmeter-process.ts';
import { eventually, isolate, serviceEnv, testConfig } from '../support/harness.ts';
import { SteadyTenant } from '../support/steady-tenant.ts';
import { readTopic } from '../support/topic-messages.ts';

// Issue 16, items 3 and 10 through Kafka: records that ingest would refuse, published past it (an older
// ingest, a replayed topic), reach the consumer. ClickHouse refuses some of them for what they hold
// ("Decimal value is too big"; an insert over more partitions than it takes): those must go to the dead
// letters while the rest, and every other tenant's usage after them, is stored; never a stall.

const MONTH_MS = 30.44 * 86_400_000;

/** A usage record as ingest would publish it, with whatever quantity and instant the test gives. */
function usageRecord(sessionId: string, user: string, quantity: string, occurredAt: Date) {
  const now = new Date();
  const payload = {
    event_id: randomUUID(), session_id: sessionId, user_id: user, agent_id: null, provider: 'resemble', event_type: 'tts_characters', model: null,
    quantity, input_tokens: null, output_tokens: null, reported_unit_cost: null, reported_total_cost: null,
    occurred_at: occurredAt.toISOString(), received_at: now.toISOString(),
  };
  return encodeRecord(makeEnvelope('usage', sessionId, payload, occurredAt, now, payload.event_id));
}

describe('poison usage records published past ingest, while a steady tenant posts through it', () => {
  const isolation = isolate('hostile-records');
  const config: Config = testConfig(isolation);
  let ingest: CallmeterProcess;
  let query: CallmeterProcess;
  let steady: SteadyTenant;

  beforeAll(async () => {
    ingest = await startCallmeter(serviceEnv(isolation, { SERVICES: 'ingest', DATA_DIR: `${isolation.dataDir}/ingest` }));
    query = await startCallmeter(serviceEnv(isolation, { SERVICES: 'consumer,query' }));
    const session = await call<{ id: string }>(ingest.url, 'POST', '/api/sessions/', { room_name: `steady-${randomUUID()}`, user_id: 'tenant-steady', agent_id: 'agent-steady' });
    steady = new SteadyTenant(ingest.url, 'tenant-steady', session.body.id);
    steady.start();
  });

  afterAll(async () => {
    await steady?.stop();
    await Promise.allSettled([ingest?.stop(), query?.stop()]);
  });

  it("dead-letters a quantity of 10^25 and stores or dead-letters each of 110 months, and the steady tenant's usage after them is stored exactly", async () => {
    const poisonSession = randomUUID();
    const tooBig = usageRecord(poisonSession, 'tenant-poison', '1' + '0'.repeat(25), new Date());
    const months = Array.from({ length: 110 }, (_, i) => usageRecord(poisonSession, 'tenant-poison', '1', new Date(Date.now() - 60_000 - i * MONTH_MS)));
    const producer = createIdempotentProducer(createKafka(config.kafka!, createLogger('silent')));
    await producer.connect();
    const topic = topicSpecs(isolation.suffix).usage.name;
    // One send, keyed by one session: one partition, so the consumer reads them as one batch.
    await producer.send({ topic, acks: -1, messages: [tooBig, ...months].map(({ key, value, headers }) => ({ key, value, headers })) });
    await producer.disconnect();

    // Let the steady tenant post for a few seconds after the poison, then stop it: all it was answered 201 for must be stored.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const requests = await steady.stop();
    expect(requests.filter((request) => request.status < 200 || request.status >= 300 || request.ms >= 1000)).toEqual([]);
    const summary = (user: string) => call<{ total_cost: string; event_count: number }>(query.url, 'GET', '/api/costs/summary', undefined, { 'x-user-id': user });
    const stalled = () => `consumer log: ${query.output().slice(-1500)}`;
    await eventually(async () => expect((await summary('tenant-steady')).body, stalled()).toMatchObject({ total_cost: steady.total.toFixed(), event_count: steady.events }), 30_000, 250);

    const dead = (await readTopic(createKafka(config.kafka!, createLogger('silent')), topicSpecs(isolation.suffix).dlq.name)).map((m) => JSON.parse(m.value!.toString()) as { payload: { quantity: string } });
    expect(dead.filter((record) => record.payload.quantity !== '1').length).toBe(1);
    const stored = (await summary('tenant-poison')).body;
    // Each month's record is either stored (exactly) or dead-lettered, never lost or stuck.
    expect(stored.event_count + dead.length - 1).toBe(110);
    expect(stored.total_cost).toBe(new Exact('0.00004').times(stored.event_count).toFixed());
    for (const path of ['/healthz', '/readyz']) expect((await fetch(`${query.url}${path}`)).status).toBe(200);
  }, 90_000);
});
