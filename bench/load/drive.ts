import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { percentile } from '../queries/measure.ts';

/**
 * The load process of `npm run bench`: C concurrent keep-alive clients POST usage events (one per
 * request, a batch per request, or the bare baseline's body) for a bounded time, at full speed or
 * paced to a target rate, and print one JSON line: events and requests answered 2xx, errors, time.
 */
export interface DriveOptions {
  readonly url: string;
  readonly mode: 'single' | 'batch' | 'bare';
  readonly durationMs: number;
  readonly connections: number;
  readonly sessions: readonly { id: string; user_id: string }[];
  readonly batchSize?: number;
  /** Events per second across all clients; absent: as fast as the server answers. */
  readonly rate?: number;
}

export interface DriveResult {
  readonly events: number;
  readonly requests: number;
  readonly errors: number;
  readonly elapsed_ms: number;
  readonly events_per_s: number;
  /** Latency of the successful requests, from the request's start to the end of its answer. */
  readonly p50_ms: number;
  readonly p99_ms: number;
  readonly statuses: Record<string, number>;
}

const PATHS = { single: '/api/usage/events', batch: '/api/usage/events/batch', bare: '/bare' } as const;

function usageEvent(session: { id: string; user_id: string }, n: number) {
  return {
    event_id: randomUUID(),
    session_id: session.id,
    user_id: session.user_id,
    provider: 'resemble',
    event_type: 'tts_characters',
    quantity: 1 + (n % 997),
  };
}

function post(agent: http.Agent, url: URL, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (response) => {
        response.resume();
        response.once('end', () => resolve(response.statusCode ?? 0));
        response.once('error', reject);
      },
    );
    request.once('error', reject);
    request.end(body);
  });
}

export async function drive(options: DriveOptions): Promise<DriveResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.connections });
  const url = new URL(PATHS[options.mode], options.url);
  const perRequest = options.mode === 'batch' ? (options.batchSize ?? 500) : 1;
  const statuses: Record<string, number> = {};
  let events = 0,
    requests = 0,
    errors = 0,
    counter = 0;
  const latencies: number[] = [];
  const started = performance.now();
  const deadline = started + options.durationMs;
  const intervalMs = options.rate === undefined ? 0 : (1000 * perRequest * options.connections) / options.rate;
  const client = async (index: number) => {
    let next = started + (intervalMs * index) / options.connections;
    while (performance.now() < deadline) {
      if (intervalMs > 0) {
        const wait = next - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        next += intervalMs;
      }
      const items = Array.from({ length: perRequest }, () =>
        usageEvent(options.sessions[counter % options.sessions.length]!, counter++),
      );
      const body = JSON.stringify(options.mode === 'batch' ? items : items[0]);
      try {
        const sent = performance.now();
        const status = await post(agent, url, body);
        statuses[status] = (statuses[status] ?? 0) + 1;
        if (status >= 200 && status < 300) {
          latencies.push(performance.now() - sent);
          requests += 1;
          events += perRequest;
        } else errors += 1;
      } catch {
        errors += 1;
      }
    }
  };
  await Promise.all(Array.from({ length: options.connections }, (_, i) => client(i)));
  const elapsed = performance.now() - started;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return {
    events,
    requests,
    errors,
    elapsed_ms: Math.round(elapsed),
    events_per_s: Math.round((events / elapsed) * 1000),
    p50_ms: Math.round(percentile(latencies, 50) * 10) / 10,
    p99_ms: Math.round(percentile(latencies, 99) * 10) / 10,
    statuses,
  };
}

if (process.argv[2] !== undefined) {
  const result = await drive(JSON.parse(process.argv[2]) as DriveOptions);
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
