import { performance } from 'node:perf_hooks';
import { loadConfig } from '../../services/shared/config.ts';
import { EventStreamReader } from '../../test/support/event-stream-reader.ts';
import { percentile } from '../queries/measure.ts';
import { createSessions, type BenchSession } from '../support/callmeter-api.ts';
import { drive, say, sleep, startServer } from '../support/processes.ts';
import { ratioOf, type Metric } from '../support/results.ts';

/**
 * The noisy-neighbour phase: one steady tenant's requests (a usage post and a summary read in turn,
 * one at a time) measured alone, then beside a tenant posting usage at a modest pace and holding
 * nothing, then beside the same tenant and pace holding the most of every per-tenant allowance at once
 * (as many live streams as its cap allows, rate entries, agents with numbers, API keys), in one embedded
 * process (`npm start`, where every tenant shares one event loop and one engine). Its p99 beside the
 * neighbour holding every cap is compared with both: alone (what any neighbour costs on a machine of
 * two cores) and beside the traffic alone (what holding the caps adds); each may be at most 1.2 ×.
 */
export interface NoisyNeighbourOptions {
  readonly dataDir: string;
  readonly measureMs: number;
  /** Rate entries of the noisy tenant (RATE_ENTRIES_PER_TENANT's default in the full run). */
  readonly rateEntries: number;
  /** Agents of the noisy tenant, each with a number (AGENTS_PER_TENANT and NUMBERS_PER_TENANT in the full run). */
  readonly agents: number;
  /** API keys of the noisy tenant (API_KEYS_PER_TENANT in the full run). */
  readonly keys: number;
  /** Live streams of the noisy tenant; absent: LIVE_STREAMS_PER_TENANT's default (its cap). */
  readonly streams?: number;
  /** The noisy tenant's usage posts per second while measured beside it. */
  readonly noisyEventsPerS: number;
}

const STEADY = 'bench-steady';
const NOISY = 'bench-noisy';
const PAUSE_MS = 50;

export async function noisyNeighbour(options: NoisyNeighbourOptions): Promise<Metric[]> {
  const streamCount = options.streams ?? loadConfig({}).liveStreams.perTenant;
  const server = await startServer('services/main.ts', { DATA_DIR: options.dataDir });
  const streams: EventStreamReader[] = [];
  try {
    const [steadySession] = await createSessions(server.url, STEADY, 1);
    say('noisy neighbour: the steady tenant alone');
    await steadyRequests(server.url, steadySession!, Math.min(5_000, options.measureMs));
    const alone = await steadyRequests(server.url, steadySession!, options.measureMs);

    const noisySessions = await createSessions(server.url, NOISY, 10);
    say(
      `noisy neighbour: the steady tenant beside a tenant posting ${options.noisyEventsPerS} events/s, holding nothing`,
    );
    const besideTraffic = await besideNoisyLoad(server.url, steadySession!, noisySessions, options);

    say(
      `noisy neighbour: a tenant with ${streamCount} live streams, ${options.rateEntries} rate entries, ${options.agents} agents with numbers, ${options.keys} keys`,
    );
    const created = {
      rates: await createAll(options.rateEntries, (i) =>
        post(server.url, '/api/rates', {
          user_id: NOISY,
          provider: 'resemble',
          model: `noisy-${i}`,
          event_type: 'tts_characters',
          price: '0.00004',
        }),
      ),
      agents: await createAll(options.agents, async (i) => {
        const agent = await post(server.url, '/api/agents/', { name: `noisy-${i}`, type: 'PIPELINE', user_id: NOISY });
        const id = (agent.body as { id?: string }).id;
        if (agent.status !== 201 || id === undefined) return agent;
        return post(
          server.url,
          '/api/telephony/numbers/assign',
          { agent_id: id, phone_number: `+1555${String(1_000_000 + i).slice(1)}` },
          { 'x-user-id': NOISY },
        );
      }),
      keys: await createAll(options.keys, (i) =>
        post(server.url, '/api/admin/keys', { name: `noisy-${i}`, scope: 'read', user_id: NOISY }),
      ),
    };
    for (let i = 0; i < streamCount; i += 1) {
      const path =
        i % 2 === 0 ? '/api/costs/live' : `/api/sessions/${noisySessions[i % noisySessions.length]!.id}/cost-stream`;
      const stream = await EventStreamReader.open(`${server.url}${path}`, { 'x-user-id': NOISY });
      if (stream.response.status !== 200) throw new Error(`noisy stream ${i} answered ${stream.response.status}`);
      streams.push(stream);
    }
    if (options.streams === undefined) {
      const refused = await fetch(`${server.url}/api/costs/live`, { headers: { 'x-user-id': NOISY } });
      await refused.arrayBuffer();
      if (refused.status !== 429) throw new Error(`the stream past the tenant's cap answered ${refused.status}`);
    }

    say('noisy neighbour: the steady tenant beside it, holding every cap');
    const { times: beside, noisy } = await besideNoisyLoad(server.url, steadySession!, noisySessions, options);
    const woken = streams.reduce((sum, stream) => sum + stream.messages.length, 0);
    const p99Alone = round(percentile(alone.all, 99));
    const p99Beside = round(percentile(beside.all, 99));
    const p99Traffic = round(percentile(besideTraffic.times.all, 99));
    // Which request carries the tail: the post (its journal append, synced) or the summary (which waits
    // for the round that stores the post, then reads the engine).
    const byKind = (kind: 'posts' | 'reads', label: string): Metric[] => {
      const kindAlone = round(percentile(alone[kind], 99));
      const kindBeside = round(percentile(beside[kind], 99));
      return [
        { name: `noisy_neighbour_steady_alone_${label}_p99_ms`, value: kindAlone, unit: 'ms' },
        {
          name: `noisy_neighbour_steady_beside_${label}_p99_ms`,
          value: kindBeside,
          unit: 'ms',
          baseline: kindAlone,
          ratio: ratioOf(kindBeside, kindAlone),
        },
      ];
    };
    return [
      { name: 'noisy_neighbour_steady_alone_p99_ms', value: p99Alone, unit: 'ms' },
      {
        name: 'noisy_neighbour_steady_beside_p99_ms',
        value: p99Beside,
        unit: 'ms',
        baseline: p99Alone,
        ratio: ratioOf(p99Beside, p99Alone),
        target: '<= 1.2',
      },
      {
        // What holding the caps adds to a neighbour's traffic: the same load, with and without them.
        name: 'noisy_neighbour_steady_beside_traffic_p99_ms',
        value: p99Traffic,
        unit: 'ms',
        baseline: p99Alone,
        ratio: ratioOf(p99Traffic, p99Alone),
      },
      {
        name: 'noisy_neighbour_caps_held_p99_ratio',
        value: ratioOf(p99Beside, p99Traffic),
        unit: 'x',
        baseline: p99Traffic,
        ratio: ratioOf(p99Beside, p99Traffic),
        target: '<= 1.2',
      },
      ...byKind('posts', 'post'),
      ...byKind('reads', 'summary'),
      { name: 'noisy_neighbour_steady_alone_p50_ms', value: round(percentile(alone.all, 50)), unit: 'ms' },
      {
        name: 'noisy_neighbour_steady_beside_traffic_p50_ms',
        value: round(percentile(besideTraffic.times.all, 50)),
        unit: 'ms',
      },
      { name: 'noisy_neighbour_steady_beside_p50_ms', value: round(percentile(beside.all, 50)), unit: 'ms' },
      { name: 'noisy_neighbour_steady_requests', value: beside.all.length, unit: 'requests' },
      { name: 'noisy_neighbour_live_streams', value: streams.length, unit: 'streams' },
      { name: 'noisy_neighbour_stream_messages', value: woken, unit: 'messages' },
      { name: 'noisy_neighbour_rate_entries', value: created.rates, unit: 'entries' },
      { name: 'noisy_neighbour_agents_with_numbers', value: created.agents, unit: 'agents' },
      { name: 'noisy_neighbour_api_keys', value: created.keys, unit: 'keys' },
      { name: 'noisy_neighbour_noisy_events_per_s', value: noisy.events_per_s, unit: 'events/s' },
    ];
  } finally {
    for (const stream of streams) stream.close();
    await server.stop();
  }
}

/** The steady tenant's requests while the noisy tenant posts usage at its pace (2 connections). */
async function besideNoisyLoad(
  url: string,
  steadySession: BenchSession,
  noisySessions: readonly BenchSession[],
  options: NoisyNeighbourOptions,
) {
  const noisyLoad = drive({
    url,
    mode: 'single',
    durationMs: options.measureMs + 2_000,
    connections: 2,
    rate: options.noisyEventsPerS,
    sessions: noisySessions,
  });
  await sleep(1_000);
  const times = await steadyRequests(url, steadySession, options.measureMs);
  return { times, noisy: await noisyLoad };
}

/** The steady tenant's request times, sorted: all of them, and its posts and its summaries apart. */
interface SteadyTimes {
  readonly all: number[];
  readonly posts: number[];
  readonly reads: number[];
}

/**
 * The steady tenant for `ms`: a usage post, then its summary, one at a time PAUSE_MS apart; every
 * request's time. Any answer but a success ends the run: a figure over failures means nothing.
 */
async function steadyRequests(url: string, session: BenchSession, ms: number): Promise<SteadyTimes> {
  const times: SteadyTimes = { all: [], posts: [], reads: [] };
  const until = performance.now() + ms;
  for (let i = 0; performance.now() < until; i += 1) {
    const started = performance.now();
    const response =
      i % 2 === 0
        ? await fetch(`${url}/api/usage/events`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({
              session_id: session.id,
              user_id: STEADY,
              provider: 'resemble',
              event_type: 'tts_characters',
              quantity: 1 + (i % 50),
            }),
          })
        : await fetch(`${url}/api/costs/summary`, { headers: { 'x-user-id': STEADY } });
    await response.arrayBuffer();
    if (!response.ok) throw new Error(`the steady tenant's request ${i} answered ${response.status}`);
    const took = performance.now() - started;
    times.all.push(took);
    (i % 2 === 0 ? times.posts : times.reads).push(took);
    await sleep(PAUSE_MS);
  }
  for (const list of [times.all, times.posts, times.reads]) list.sort((a, b) => a - b);
  return times;
}

async function post(url: string, path: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: (text.startsWith('{') ? JSON.parse(text) : null) as unknown };
}

/** Creates `count` things one after another (as a tenant's script would); how many were created (2xx). */
async function createAll(count: number, create: (i: number) => Promise<{ status: number; body: unknown }>) {
  let created = 0;
  for (let i = 0; i < count; i += 1) {
    const answer = await create(i);
    if (answer.status >= 300)
      throw new Error(`creating #${i} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
    created += 1;
  }
  return created;
}

const round = (ms: number) => Math.round(ms * 10) / 10;
