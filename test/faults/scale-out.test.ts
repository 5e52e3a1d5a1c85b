import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createClient } from '@clickhouse/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalKafka } from '../../infra/local/kafka.ts';
import { LocalRedis } from '../../infra/local/redis.ts';
import type { ClickHouse } from '../../services/shared/clickhouse/client.ts';
import { loadConfig, type Config } from '../../services/shared/config.ts';
import { Exact } from '../../services/shared/exact-decimal.ts';
import { call } from '../support/api.ts';
import { makeUsageEventBody } from '../support/bodies.ts';
import { startCallmeter, type CallmeterProcess } from '../support/callmeter-process.ts';
import { startClickHouseHttp, type ClickHouseHttpProcess } from '../support/clickhouse-http-process.ts';
import { groupAssignments } from '../support/consumer-group.ts';
import { CostLedger, expectViewsExact } from '../support/cost-ledger.ts';
import { drained } from '../support/drained.ts';
import { eventually } from '../support/harness.ts';
import { expectedTotals, expectSessionsCountedOnce, storedTotals } from '../support/rollups.ts';
import { CorrectionDriver } from './correction-driver.ts';
import { createDriverSessions, LoadDriver, type DriverSession } from './load-driver.ts';
import { phaseReport } from './phase-report.ts';

const USER = 'scale-out-tenant';
const SESSIONS = 32;
const LOAD_MS = 60_000;
/** CONSUMER_MEMBERS of each consumer process: 12 usage partitions leave every member of 3 processes some. */
const MEMBERS_PER_PROCESS = 2;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Scale-out: every service in more than one process, over the real Kafka broker,
 * the real redis-server and one ClickHouse database reached over HTTP (CLICKHOUSE_URL). No ClickHouse
 * server can run here, so that database is the embedded engine behind the test endpoint of
 * test/support/clickhouse-http (test equipment): callmeter's own HTTP path, against chdb.
 * Three consumer processes share one group; during a 60 s load one is killed with SIGKILL and a fourth
 * joins. Two ingest processes share Redis and Kafka; two query processes read the same database.
 * Meanwhile acknowledged events are voided and amended through both ingest processes in turn, so two
 * tries of one correction meet in the Redis guard while consumers die and join.
 */
describe('callmeter scaled out: consumers, ingest and query in several processes over one ClickHouse', () => {
  const folder = mkdtempSync(path.join(os.tmpdir(), 'callmeter-scale-out-'));
  let kafka: LocalKafka;
  let redis: LocalRedis;
  let clickhouse: ClickHouseHttpProcess;
  let env: Record<string, string>;
  let config: Config;
  let ch: ClickHouse;
  const processes = new Map<string, CallmeterProcess>();
  const killed = new Set<string>();
  const start = async (services: string, name: string) => {
    // Consumers log their warnings (regrouped rounds, failed stores): what a stored-twice event is read against.
    const logLevel: Record<string, string> = services === 'consumer' ? { LOG_LEVEL: 'warn' } : {};
    const started = await startCallmeter(
      { ...env, ...logLevel, SERVICES: services, DATA_DIR: path.join(folder, name) },
      120_000,
    );
    processes.set(name, started);
  };
  const ingests = () => [processes.get('ingest-a')!, processes.get('ingest-b')!];
  const queries = () => [processes.get('query-a')!, processes.get('query-b')!];
  /** The processes that ended without being killed by the test: none should. */
  const endedByThemselves = () =>
    [...processes].filter(
      ([name, { child }]) => !killed.has(name) && (child.exitCode !== null || child.signalCode !== null),
    );
  const ledger = new CostLedger();
  let sessions: DriverSession[] = [];

  beforeAll(async () => {
    kafka = await LocalKafka.create(path.join(folder, 'kafka'));
    redis = await LocalRedis.create(path.join(folder, 'redis'));
    [clickhouse] = await Promise.all([
      startClickHouseHttp(path.join(folder, 'clickhouse')),
      kafka.start(),
      redis.start(),
    ]);
    env = {
      KAFKA_BROKERS: kafka.brokers,
      REDIS_URL: redis.url,
      CLICKHOUSE_URL: clickhouse.url,
      KAFKA_GROUP_ID: 'scale-out',
      // Two members of the group in each consumer process: a kill -9 takes both of its members away.
      CONSUMER_MEMBERS: String(MEMBERS_PER_PROCESS),
      LOG_LEVEL: 'error',
      SHUTDOWN_TIMEOUT_MS: '5000',
    };
    config = loadConfig(env);
    ch = {
      client: createClient({ url: clickhouse.url }),
      database: config.clickhouse.database,
      embedded: false,
      cluster: null,
    };
    // The first process makes the database and the topics; the others then find them made.
    await start('consumer', 'consumer-1');
    await Promise.all([
      start('consumer', 'consumer-2'),
      start('consumer', 'consumer-3'),
      start('ingest', 'ingest-a'),
      start('ingest', 'ingest-b'),
      start('query', 'query-a'),
      start('query', 'query-b'),
    ]);
  }, 300_000);

  afterAll(async () => {
    // A process that died on its own is the first thing to read when the test fails.
    for (const [name, process_] of endedByThemselves()) {
      const { exitCode, signalCode } = process_.child;
      process.stdout.write(
        `\n${name} ended by itself (code ${exitCode}, signal ${signalCode}); its last output:\n${process_.output().slice(-6_000)}\n`,
      );
    }
    await Promise.allSettled([...processes.values()].map((process_) => process_.stop('SIGKILL')));
    await ch?.client.close();
    await Promise.allSettled([clickhouse?.stop(), kafka?.stop(), redis?.stop()]);
  });

  it('three consumer processes in one group (two members each), one killed and one added during a 60 s load, store every acknowledged event and every void and amend of them exactly once', async () => {
    await eventually(
      async () => expectMembersWithPartitions(await groupAssignments(config, 'usage'), 3 * MEMBERS_PER_PROCESS),
      60_000,
      500,
    );
    sessions = await createDriverSessions(ingests()[0]!.url, USER, SESSIONS);
    for (const session of sessions) ledger.addSession(session.id, session.user_id, session.agent_id);
    let turn = 0;
    // Through both ingest processes in turn: a retried or resent event often reaches the other one.
    const driver = new LoadDriver(() => ingests()[turn++ % 2]!.url, sessions);
    // Each retry of a correction goes to the other ingest process, and so does a raced one's second client:
    // two tries of one correction then meet in the Redis guard, not in one process's queue.
    const corrections = new CorrectionDriver((correctionTurn) => ingests()[correctionTurn % 2]!.url, driver, USER, {
      concurrency: 4,
      raceEvery: 2,
    });
    const started = Date.now();
    const until = (ms: number) => sleep(Math.max(0, started + ms - Date.now()));
    driver.phase = 'three consumers';
    driver.start();
    corrections.start();
    await until(15_000);
    driver.phase = 'consumer-2 killed (kill -9)';
    process.stdout.write(`consumer-2 killed at ${new Date().toISOString()}\n`);
    killed.add('consumer-2');
    await processes.get('consumer-2')!.stop('SIGKILL');
    await until(30_000);
    driver.phase = 'consumer-4 added';
    process.stdout.write(`consumer-4 started at ${new Date().toISOString()}\n`);
    await start('consumer', 'consumer-4');
    await until(LOAD_MS);
    await Promise.all([driver.stop(), corrections.stop()]);
    const made = [...corrections.made.entries()];
    const voids = made.filter(([, correction]) => correction.kind === 'void').length;
    const raced = made.filter(([, correction]) => correction.clients === 2).length;
    process.stdout.write(
      `load: ${driver.events.size} events in ${Date.now() - started} ms; retried requests: ${JSON.stringify(Object.fromEntries(driver.retries))}\n` +
        `corrections made: ${made.length} (${voids} voids, ${made.length - voids} amends; ${raced} sent by two clients at once through both ingest processes); retried: ${JSON.stringify(Object.fromEntries(corrections.retries))}\n`,
    );
    const events = [...driver.events.values()];
    const acknowledged = events.filter((event) => event.acknowledged);
    // The ledger first: the views' test then reads what they show even when a check here fails.
    for (const event of acknowledged) ledger.accept(sessions[event.session]!.id, event.id, event.cost);
    for (const [eventId, correction] of made)
      if (correction.kind === 'void') ledger.void(USER, eventId);
      else ledger.amend(USER, eventId, correction.cost);
    expect(events.filter((event) => !event.acknowledged && !event.refused)).toEqual([]);
    expect(events.filter((event) => event.invalid !== event.refused)).toEqual([]);
    expect(made.filter(([, correction]) => !correction.settled)).toEqual([]);
    expect(made.length).toBeGreaterThanOrEqual(30);
    expect(raced).toBeGreaterThanOrEqual(10);
    // Of two clients, one made it and the other found it made: never both, whichever process each reached.
    expect(made.filter(([, correction]) => correction.created > 1)).toEqual([]);
    await drained(config, 'usage', 180_000);

    const { stored, corrected } = await storedCounts(ch, USER);
    process.stdout.write(`\n${phaseReport(events, stored)}\n`);
    const wrong = events.filter((event) => (stored.get(event.id) ?? 0) !== (event.acknowledged ? 1 : 0));
    if (wrong.length > 0)
      process.stdout.write(
        await whereStored(
          ch,
          wrong.map((event) => event.id),
          processes,
          clickhouse,
        ),
      );
    expect(
      wrong.map((event) => ({
        ...event,
        cost: event.cost.toFixed(),
        stored: stored.get(event.id) ?? 0,
        corrected: corrections.made.get(event.id)?.kind ?? null,
      })),
    ).toEqual([]);
    expect(stored.size).toBe(acknowledged.length);
    // A correction's rows, by the weights stored under each row id: a void's reversal, an amend's reversal
    // and replacement, each row once; none of an event nobody corrected.
    expect(Object.fromEntries([...corrected].map(([eventId, rows]) => [eventId, [...rows.values()].sort()]))).toEqual(
      Object.fromEntries(made.map(([eventId, { kind }]) => [eventId, kind === 'void' ? [[-1]] : [[-1], [1]]])),
    );
    // Every table usage_events feeds (the rollups the views read and the id table of exactly-once).
    const counted = acknowledged.length - voids;
    const cost = Exact.sum(0, ...acknowledged.map((event) => corrections.costOf(event)));
    const rows = acknowledged.length + voids + 2 * (made.length - voids);
    expect(await storedTotals(ch)).toEqual(expectedTotals(counted, cost.toFixed(), rows));
    await expectSessionsCountedOnce(ch);
    // The group ends with consumer-1, consumer-3 and consumer-4, each holding usage partitions.
    await eventually(
      async () => expectMembersWithPartitions(await groupAssignments(config, 'usage'), 3 * MEMBERS_PER_PROCESS),
      60_000,
      500,
    );
    expect(endedByThemselves().map(([name]) => name)).toEqual([]);
  }, 420_000);

  it('two query processes answer every view of a tenant the same, to the exact Decimal sum', async () => {
    for (const query of queries())
      await expectViewsExact(ledger, query.url, [USER], (check) => eventually(check, 30_000, 500), {
        eventCounts: true,
      });
    // The whole summary (every provider, service and count) alike, but for as_of, the moment each answered.
    const summaries = await Promise.all(
      queries().map(async (query) => {
        const answer = await call(query.url, 'GET', '/api/costs/summary', undefined, { 'x-user-id': USER });
        return { ...answer.body, as_of: undefined };
      }),
    );
    expect(summaries[1]).toEqual(summaries[0]);
    expect(summaries[0]).toMatchObject({
      total_cost: ledger.expected(USER).total,
      event_count: ledger.expected(USER).event_count,
    });
  });

  it('concurrent PATCHes of one session through both ingest processes never lose an update', async () => {
    const user = 'scale-out-patches';
    const created = await call<{ id: string }>(ingests()[0]!.url, 'POST', '/api/sessions/', {
      room_name: `room-${randomUUID()}`,
      user_id: user,
    });
    expect(created.status).toBe(201);
    const id = created.body.id;
    const patches = Array.from({ length: 60 }, (_, i) =>
      patchUntilAnswered(ingests()[i % 2]!.url, id, { [`key_${i}`]: i }),
    );
    expect(await Promise.all(patches)).toEqual(Array(60).fill(200));
    const keys = Array.from({ length: 60 }, (_, i) => `key_${i}`).sort();
    for (const ingest of ingests()) {
      const read = await call<{ session_data: Record<string, unknown> }>(ingest.url, 'GET', `/api/sessions/${id}`);
      expect(Object.keys(read.body.session_data).sort()).toEqual(keys);
    }
    // The stored history holds the same: the latest version (the create and 60 changes) has every key.
    await drained(config, 'sessions', 60_000);
    const result = await ch.client.query({
      query: `SELECT toUInt32(version) AS version, JSONExtractKeys(session_data) AS keys FROM ${ch.database}.sessions_current WHERE id = {id:UUID}`,
      query_params: { id },
      format: 'JSONEachRow',
    });
    const [row] = await result.json<{ version: number; keys: string[] }>();
    expect([row?.version, [...(row?.keys ?? [])].sort()]).toEqual([61, keys]);
  });

  it('usage sent through both ingest processes at once, the same event ids to each, is counted once', async () => {
    const user = 'scale-out-duplicates';
    const own = await createDriverSessions(ingests()[1]!.url, user, 4);
    for (const session of own) ledger.addSession(session.id, user, session.agent_id);
    for (let round = 0; round < 20; round += 1) {
      const bodies = Array.from({ length: round % 4 === 0 ? 1 : 25 }, (_, i) =>
        makeUsageEventBody(own[(round + i) % own.length]!.id, { user_id: user, quantity: 1 + round * 25 + i }),
      );
      const single = bodies.length === 1;
      const answers = await Promise.all(
        ingests().map((ingest) =>
          call(
            ingest.url,
            'POST',
            single ? '/api/usage/events' : '/api/usage/events/batch',
            single ? bodies[0] : bodies,
          ),
        ),
      );
      expect(answers.map((answer) => answer.status)).toEqual(single ? [201, 201] : [200, 200]);
      if (!single) {
        for (const answer of answers)
          expect((answer.body as unknown as { status: string }[]).map((item) => item.status)).toEqual(
            Array(bodies.length).fill('accepted'),
          );
      }
      for (const body of bodies)
        ledger.accept(
          String(body.session_id),
          String(body.event_id),
          new Exact('0.00004').times(String(body.quantity)),
        );
    }
    await drained(config, 'usage', 60_000);
    const { stored } = await storedCounts(ch, user);
    expect([...stored.values()].filter((n) => n !== 1)).toEqual([]);
    for (const query of queries())
      await expectViewsExact(ledger, query.url, [user], (check) => eventually(check, 30_000, 500), {
        eventCounts: true,
      });
  });
});

function expectMembersWithPartitions(assignments: number[][], members: number): void {
  expect(assignments.length, `members of the group: ${JSON.stringify(assignments)}`).toBe(members);
  expect(assignments.filter((partitions) => partitions.length === 0)).toEqual([]);
}

/** A client's PATCH: retried while the answer says to retry (503 or 429 with Retry-After), else final. */
async function patchUntilAnswered(url: string, id: string, metadata: Record<string, unknown>): Promise<number> {
  for (let attempt = 0; ; attempt += 1) {
    const answer = await call(url, 'PATCH', `/api/sessions/${id}`, { metadata });
    if ((answer.status !== 503 && answer.status !== 429) || attempt === 20) return answer.status;
    await sleep(250);
  }
}

/**
 * What usage_events holds of a tenant: how often each event id is stored as sent (`stored`), and each
 * corrected event's correction rows (`corrected`: by the event as sent, each row id's stored weights),
 * since a correction's rows have ids of their own and name the event in `correction_of`.
 */
async function storedCounts(ch: ClickHouse, user: string) {
  const result = await ch.client.query({
    query: `SELECT toString(id) AS id, toString(correction_of) AS of, groupArray(toInt8(weight)) AS weights
      FROM ${ch.database}.usage_events WHERE user_id = {user:String} GROUP BY id, of`,
    query_params: { user },
    format: 'JSONEachRow',
  });
  const stored = new Map<string, number>();
  const corrected = new Map<string, Map<string, number[]>>();
  for (const row of await result.json<{ id: string; of: string | null; weights: number[] }>()) {
    if (row.of === null) stored.set(row.id, row.weights.length);
    else corrected.set(row.of, (corrected.get(row.of) ?? new Map<string, number[]>()).set(row.id, row.weights));
  }
  return { stored, corrected };
}

/**
 * For a failure: each row of these events in usage_events (its source message, when it was stored and
 * in which part), and every consumer's warnings, so that a copy stored twice can be traced to the rounds
 * that stored it.
 */
async function whereStored(
  ch: ClickHouse,
  ids: readonly string[],
  processes: ReadonlyMap<string, CallmeterProcess>,
  clickhouse: ClickHouseHttpProcess,
): Promise<string> {
  const result = await ch.client.query({
    // No alias takes a column's name: WHERE would read the alias (a String) for the UUID column.
    query: `SELECT toString(id) AS event_id, toString(correction_of) AS of, toInt8(weight) AS weight,
        kafka_partition, kafka_offset, toString(stored_at) AS stored_at, toString(received_at) AS received_at,
        _part AS part
      FROM ${ch.database}.usage_events
      WHERE has({ids:Array(UUID)}, id) OR has({ids:Array(UUID)}, assumeNotNull(correction_of))
      ORDER BY event_id, stored_at`,
    query_params: { ids },
    format: 'JSONEachRow',
  });
  const rows = (await result.json<Record<string, unknown>>()).map((row) => JSON.stringify(row));
  const warnings = [...processes]
    .filter(([name]) => name.startsWith('consumer'))
    .map(
      ([name, { output }]) =>
        `${name}:\n${output()
          .split('\n')
          .filter((line) => /"level":"(warn|error|fatal)"/.test(line))
          .slice(-60)
          .join('\n')}`,
    );
  const late = clickhouse
    .output()
    .split('\n')
    .filter((line) => line.includes('client gone'));
  return `\ninserts that outlived their client:\n${late.join('\n')}\nthe rows of the events stored other than once:\n${rows.join('\n')}\nthe consumers' warnings:\n${warnings.join('\n')}\n`;
}
