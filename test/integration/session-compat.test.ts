import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKafka } from '../../services/shared/kafka/client.ts';
import { topicSpecs } from '../../services/shared/kafka/topics.ts';
import { createLogger } from '../../services/shared/logger.ts';
import { call } from '../support/api.ts';
import { makeUsageEventBody } from '../support/bodies.ts';
import { startCallmeter, type CallmeterProcess } from '../support/callmeter-process.ts';
import { drained } from '../support/drained.ts';
import { eventually, isolate, serviceEnv, testConfig, type Isolation } from '../support/harness.ts';
import { readTopic } from '../support/topic-messages.ts';

type SessionBody = {
  id: string;
  status: string;
  agent_id: string | null;
  session_data: Record<string, unknown>;
  metadata: Record<string, unknown>;
  direction: string | null;
  call_direction: string | null;
};
type Turn = { content: string; speaker: string; id: string; session_id: string; timestamp: string };
type CostCard = {
  session_id: string;
  total_cost: number;
  total_cost_exact: string;
  breakdown: {
    provider: string;
    service: string;
    units: number;
    unit_label: string;
    cost: number;
    units_exact: string;
    cost_exact: string;
  }[];
};
type Breakdown = {
  total_cost: string;
  items: { provider: string; service: string; quantity: string; unit: string; cost: string }[];
};

interface Running {
  /** Two ingest processes in the Kafka mode (one shared Redis), the same process twice embedded. */
  readonly ingest: readonly [string, string];
  /** The process whose ClickHouse engine the consumer writes: history reads and cost queries. */
  readonly reads: string;
  readonly isolation: Isolation;
  readonly kafka: boolean;
  readonly stop: () => Promise<unknown>;
}

const MODES = [
  {
    name: 'the embedded process (memory store)',
    start: async (): Promise<Running> => {
      const isolation = isolate('compat-embedded');
      const app = await startCallmeter({ DATA_DIR: isolation.dataDir, LOG_LEVEL: 'warn' });
      return { ingest: [app.url, app.url], reads: app.url, isolation, kafka: false, stop: () => app.stop() };
    },
  },
  {
    name: 'two ingest processes over real Kafka and Redis',
    start: async (): Promise<Running> => {
      const isolation = isolate('compat-kafka');
      const env = (services: string, dir: string) =>
        serviceEnv(isolation, { SERVICES: services, DATA_DIR: `${isolation.dataDir}/${dir}` });
      // Without CLICKHOUSE_URL each process has its own embedded engine: the second ingest process
      // also runs the consumer, so that its history reads see what the consumer stored.
      const processes: CallmeterProcess[] = await Promise.all([
        startCallmeter(env('ingest', 'a')),
        startCallmeter(env('ingest,consumer,query', 'b')),
      ]);
      return {
        ingest: [processes[0]!.url, processes[1]!.url],
        reads: processes[1]!.url,
        isolation,
        kafka: true,
        stop: () => Promise.allSettled(processes.map((p) => p.stop())),
      };
    },
  },
] as const;

describe.each(MODES)('the old worker’s and dashboard’s session routes on $name', (mode) => {
  let run: Running;
  const post = <T>(path: string, body: unknown, i = 0) => call<T>(run.ingest[i % 2]!, 'POST', path, body);
  const get = <T>(path: string, url = run.reads) => call<T>(url, 'GET', path);

  beforeAll(async () => {
    run = await mode.start();
  }, 120_000);

  afterAll(async () => {
    await run?.stop();
  });

  it('makes one session of 20 concurrent creates for one room, from both processes, with every metadata key', async () => {
    const room = `room-${randomUUID()}`;
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        post<SessionBody>('/api/sessions/', { room_name: room, user_id: 'u-c', metadata: { [`k${i}`]: i } }, i),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(201));
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
    const read = await get<SessionBody>(`/api/sessions/by-room/${room}`);
    expect(Object.keys(read.body.session_data).sort()).toEqual(Array.from({ length: 20 }, (_, i) => `k${i}`).sort());
  });

  it('answers the token route’s and the worker’s creates with one session, filled with the worker’s agent_id, and gives another user its own session of the room', async () => {
    const room = `room-${randomUUID()}`;
    const token = await post<SessionBody>(
      '/api/sessions/',
      { room_name: room, user_id: 'u-1', metadata: { source: 'token' } },
      0,
    );
    const worker = await post<SessionBody>(
      '/api/sessions/',
      { room_name: room, user_id: 'u-1', agent_id: 'agent-7', metadata: { source: 'worker', lang: 'en' } },
      1,
    );
    expect([token.status, worker.status, worker.body.id]).toEqual([201, 201, token.body.id]);
    expect(worker.body).toMatchObject({
      agent_id: 'agent-7',
      session_data: { source: 'token', lang: 'en' },
      metadata: { source: 'token', lang: 'en' },
    });
    const other = await post<SessionBody>('/api/sessions/', { room_name: room, user_id: 'u-2' });
    expect(other.status).toBe(201);
    expect(other.body.id).not.toBe(token.body.id);

    // Both users hold the room live: an end that names neither is refused, and ends nothing.
    const unnamed = await post<{ detail: string }>(`/api/sessions/by-room/${room}/end`, undefined);
    expect([unnamed.status, unnamed.body.detail]).toEqual([409, expect.stringContaining('name the user')]);
    const ended = await call<SessionBody>(run.ingest[0]!, 'POST', `/api/sessions/by-room/${room}/end`, undefined, {
      'x-user-id': 'u-2',
    });
    expect([ended.body.status, ended.body.id]).toEqual(['COMPLETED', other.body.id]);
    expect((await get<SessionBody>(`/api/sessions/${token.body.id}`)).body.status).toBe('ACTIVE');
    // One user left live: the room's latest session of any user, as the replaced service answered.
    expect((await get<SessionBody>(`/api/sessions/by-room/${room}`)).body.id).toBe(other.body.id);
    const next = await post<SessionBody>('/api/sessions/', { room_name: room, user_id: 'u-2' }, 1);
    expect(next.status).toBe(201);
    expect(next.body.id).not.toBe(other.body.id);
  });

  it('takes an end sent as a local datetime without an offset from a worker up to 14 hours ahead of UTC', async () => {
    const session = (await post<SessionBody>('/api/sessions/', { room_name: `room-${randomUUID()}`, user_id: 'u-z' }))
      .body;
    // A naive datetime is the sender's local clock read as UTC: UTC+10 is 10 hours ahead of now.
    const local = (aheadHours: number) => new Date(Date.now() + aheadHours * 3_600_000).toISOString().slice(0, 19);
    const end = (at: string) =>
      call<{ detail: unknown }>(run.ingest[0]!, 'PATCH', `/api/sessions/${session.id}`, { ended_at: at });
    expect((await end(local(15))).status).toBe(422);
    expect((await end(`${local(10)}Z`)).status).toBe(422);
    expect((await end(local(10))).status).toBe(200);
  });

  it('stores the worker’s turns by room and by id, reads them oldest first, and stores a redelivered turn once', async () => {
    const room = `room-${randomUUID()}`;
    const session = (await post<SessionBody>('/api/sessions/', { room_name: room, user_id: 'u-t' })).body;
    const turns: Turn[] = [];
    for (const [i, speaker] of ['USER', 'AGENT', 'USER'].entries()) {
      const answer = await post<Turn>(
        `/api/sessions/by-room/${room}/transcripts`,
        { content: `turn ${i}`, speaker },
        i,
      );
      expect(answer.status).toBe(201);
      expect(Object.keys(answer.body)).toEqual(['content', 'speaker', 'id', 'session_id', 'timestamp']);
      turns.push(answer.body);
    }
    const byId = await post<Turn>(`/api/sessions/${session.id}/transcripts`, {
      content: 'turn 3',
      speaker: 'AGENT',
      session_id: session.id,
    });
    expect([byId.status, byId.body.session_id]).toEqual([201, session.id]);
    turns.push(byId.body);
    expect((await post(`/api/sessions/by-room/no-${room}/transcripts`, { content: 'x', speaker: 'USER' })).status).toBe(
      404,
    );
    expect(
      (await post(`/api/sessions/by-room/${room}/transcripts`, { content: 'x'.repeat(32 * 1024 + 1), speaker: 'USER' }))
        .status,
    ).toBe(422);

    const read = await eventually(async () => {
      const answer = await get<Turn[]>(`/api/sessions/${session.id}/transcripts`);
      expect(answer.body).toHaveLength(4);
      return answer.body;
    });
    expect(read).toEqual(turns);
    // FINAL reads of a ReplacingMergeTree keyed by the turn: a record consumed twice is one turn.
    if (run.kafka) await redeliverTranscripts(run.isolation);
    expect((await get<Turn[]>(`/api/sessions/${session.id}/transcripts`)).body).toEqual(turns);
    expect((await get<Turn[]>(`/api/sessions/${randomUUID()}/transcripts`)).text).toBe('[]');
  });

  it('answers the analysis, direction and metadata the dashboard reads, and lists by direction', async () => {
    const user = `u-dir-${randomUUID()}`;
    const outbound = (
      await post<SessionBody>('/api/sessions/', {
        room_name: `room-${randomUUID()}`,
        user_id: user,
        metadata: { lang: 'en' },
      })
    ).body;
    const inbound = (await post<SessionBody>('/api/sessions/', { room_name: `room-${randomUUID()}`, user_id: user }))
      .body;
    const analysis = {
      summary: 'Booked',
      sentiment: 'positive',
      sentiment_score: 0.9,
      topics: [],
      outcome: 'resolved',
      action_items: [],
    };
    const patched = await call<SessionBody>(run.ingest[0], 'PATCH', `/api/sessions/${outbound.id}`, {
      call_direction: 'OUTBOUND',
      analysis,
    });
    expect(patched.body).toMatchObject({ call_direction: 'OUTBOUND', direction: 'outbound', metadata: { lang: 'en' } });
    await call(run.ingest[1], 'PATCH', `/api/sessions/${inbound.id}`, { call_direction: 'INBOUND' });

    expect((await get(`/api/sessions/${outbound.id}/analysis`)).body).toEqual(analysis);
    expect((await get(`/api/sessions/${inbound.id}/analysis`)).text).toBe('null');
    expect((await get(`/api/sessions/${randomUUID()}/analysis`)).text).toBe('{"detail":"Session not found"}');

    const list = (direction: string) =>
      call<{ sessions: SessionBody[]; total: number }>(
        run.reads,
        'GET',
        `/api/sessions/?direction=${direction}`,
        undefined,
        { 'x-user-id': user },
      );
    await eventually(async () => {
      const [out, inb] = [(await list('outbound')).body, (await list('inbound')).body];
      expect([out.total, out.sessions.map((s) => [s.id, s.direction])]).toEqual([1, [[outbound.id, 'outbound']]]);
      expect([inb.total, inb.sessions.map((s) => s.id)]).toEqual([1, [inbound.id]]);
    });
    expect((await list('sideways')).status).toBe(422);
  });

  it('answers the call page’s cost card with the rows and total of /cost-breakdown, live usage included', async () => {
    const session = (
      await post<SessionBody>('/api/sessions/', { room_name: `room-${randomUUID()}`, user_id: 'tenant-1' })
    ).body;
    for (const body of [
      makeUsageEventBody(session.id),
      makeUsageEventBody(session.id, { quantity: 5 }),
      makeUsageEventBody(session.id, { provider: 'deepgram', event_type: 'stt_minutes', quantity: 1.5 }),
    ]) {
      expect((await post('/api/usage/events', body)).status).toBe(201);
    }
    const [card, breakdown] = await eventually(async () => {
      const [c, b] = [
        await get<CostCard>(`/api/sessions/${session.id}/costs`, run.reads),
        await get<Breakdown>(`/api/sessions/${session.id}/cost-breakdown`, run.reads),
      ];
      expect(c.body.breakdown.reduce((n, row) => n + row.units, 0)).toBe(9.5);
      return [c.body, b.body];
    });
    expect(card.total_cost_exact).toBe(breakdown.total_cost);
    expect(card.total_cost).toBe(Number(breakdown.total_cost));
    expect(card.breakdown.map((r) => [r.provider, r.service, r.units_exact, r.unit_label, r.cost_exact])).toEqual(
      breakdown.items.map((i) => [i.provider, i.service, i.quantity, i.unit, i.cost]),
    );
    expect(card.breakdown.every((r) => typeof r.units === 'number' && typeof r.cost === 'number')).toBe(true);
    expect((await get(`/api/sessions/${randomUUID()}/costs`, run.reads)).text).toBe('{"detail":"Session not found"}');
  });
});

/** Publishes every transcript record of the sessions topic once more, as a redelivery would, and waits until it is consumed. */
async function redeliverTranscripts(isolation: Isolation): Promise<void> {
  const config = testConfig(isolation);
  const kafka = createKafka(config.kafka!, createLogger('silent'));
  const topic = topicSpecs(config.kafka!.topicSuffix).sessions.name;
  const again = (await readTopic(kafka, topic)).filter((m) => m.headers?.kind?.toString() === 'transcript');
  expect(again.length).toBeGreaterThan(0);
  const producer = kafka.producer();
  await producer.connect();
  try {
    await producer.send({ topic, messages: again.map((m) => ({ key: m.key, value: m.value, headers: m.headers })) });
  } finally {
    await producer.disconnect();
  }
  await drained(config, 'sessions');
}
