import { EventStreamReader } from '../../test/support/event-stream-reader.ts';
import { createSessions, endSession, type BenchSession } from '../support/callmeter-api.ts';
import { drive, sleep } from '../support/processes.ts';

export interface SoakLoadOptions {
  readonly ingestUrl: string;
  readonly queryUrl: string;
  readonly user: string;
  /** Usage events a second, posted one a request. */
  readonly rate: number;
  readonly connections: number;
  /** Calls live this long: each segment of the load posts to sessions of its own, ended after it. */
  readonly segmentMs: number;
  readonly sessionsPerSegment: number;
  /** Date.now() at which the load stops. */
  readonly endAt: number;
}

export interface SoakLoadResult {
  /** Each run of the load driver: when it started (Date.now()), its events answered 2xx, its length. */
  segments: { startedAt: number; events: number; elapsedMs: number }[];
  events: number;
  requests: number;
  errors: number;
  statuses: Record<string, number>;
  sessions: number;
  sessionStartFailures: number;
  sessionEndFailures: number;
  reads: number;
  readFailures: number;
  /** Failed reads by path and status ("/api/costs/summary 503"; "error": no answer). */
  readFailureKinds: Record<string, number>;
  liveMessages: number;
}

/** A cost dashboard's reads every 2 s, and a Prometheus scrape of each process every 15 s. */
const READ_EVERY_MS = 2_000;
const SCRAPE_EVERY_MS = 15_000;

/**
 * The soak's steady load: usage events at a fixed rate from the load driver (a separate process), to
 * sessions that come and go as calls do, so that anything a process keeps per session is exercised;
 * beside it the reads of a dashboard, one live cost stream held open, and metric scrapes.
 */
export async function runSoakLoad(options: SoakLoadOptions): Promise<SoakLoadResult> {
  const result: SoakLoadResult = {
    segments: [],
    events: 0,
    requests: 0,
    errors: 0,
    statuses: {},
    sessions: 0,
    sessionStartFailures: 0,
    sessionEndFailures: 0,
    reads: 0,
    readFailures: 0,
    readFailureKinds: {},
    liveMessages: 0,
  };
  const stream = await EventStreamReader.open(`${options.queryUrl}/api/costs/live`, { 'x-user-id': options.user });
  let latest: BenchSession | undefined;
  let stopped = false;
  const readers = Promise.all([
    every(
      READ_EVERY_MS,
      () => stopped,
      () => readCosts(options, latest, result),
    ),
    every(
      SCRAPE_EVERY_MS,
      () => stopped,
      () => scrapeMetrics([options.ingestUrl, options.queryUrl], result),
    ),
  ]);
  const endings: Promise<void>[] = [];
  const end = (sessions: readonly BenchSession[]) =>
    endings.push(
      Promise.all(sessions.map((s) => endSession(options.ingestUrl, s).catch(() => 0))).then((statuses) => {
        result.sessionEndFailures += statuses.filter((status) => status !== 200).length;
      }),
    );
  try {
    let next = createSessions(options.ingestUrl, options.user, options.sessionsPerSegment);
    let sessions: BenchSession[] = [];
    while (options.endAt - Date.now() > 1_000) {
      // A session that could not be made has no id: the segment posts to those that were (or to the last
      // segment's, when none was), and the failures are counted.
      const created = await next;
      const started = created.filter((s) => typeof s.id === 'string');
      result.sessionStartFailures += created.length - started.length;
      result.sessions += started.length;
      if (started.length > 0) sessions = started;
      latest = sessions[0];
      // The next segment's calls start while this one runs, so the load has no gap but the driver's start.
      next = createSessions(options.ingestUrl, options.user, options.sessionsPerSegment);
      const startedAt = Date.now();
      const segment = await drive({
        url: options.ingestUrl,
        mode: 'single',
        durationMs: Math.min(options.segmentMs, options.endAt - Date.now()),
        connections: options.connections,
        rate: options.rate,
        sessions: sessions.length > 0 ? sessions : created,
      });
      result.segments.push({ startedAt, events: segment.events, elapsedMs: segment.elapsed_ms });
      result.events += segment.events;
      result.requests += segment.requests;
      result.errors += segment.errors;
      for (const [status, count] of Object.entries(segment.statuses))
        result.statuses[status] = (result.statuses[status] ?? 0) + count;
      end(started);
    }
    end((await next).filter((s) => typeof s.id === 'string'));
  } finally {
    stopped = true;
    await readers;
    await Promise.all(endings);
    result.liveMessages = stream.messages.length;
    stream.close();
  }
  return result;
}

async function every(intervalMs: number, stopped: () => boolean, task: () => Promise<void>): Promise<void> {
  while (!stopped()) {
    const next = Date.now() + intervalMs;
    await task();
    while (!stopped() && Date.now() < next) await sleep(Math.min(250, next - Date.now()));
  }
}

async function readCosts(options: SoakLoadOptions, session: BenchSession | undefined, result: SoakLoadResult) {
  const paths = ['/api/costs/summary', '/api/costs/by-agent', '/api/costs/timeline?period=daily'];
  if (session !== undefined) paths.push(`/api/sessions/${session.id}/cost-breakdown`);
  for (const path of paths) await read(`${options.queryUrl}${path}`, { 'x-user-id': options.user }, result);
}

async function scrapeMetrics(urls: readonly string[], result: SoakLoadResult) {
  for (const url of urls) await read(`${url}/metrics`, {}, result);
}

async function read(url: string, headers: Record<string, string>, result: SoakLoadResult): Promise<void> {
  const failed = (kind: string) => {
    const key = `${new URL(url).pathname.replace(/[0-9a-f-]{36}/, '{id}')} ${kind}`;
    result.readFailures += 1;
    result.readFailureKinds[key] = (result.readFailureKinds[key] ?? 0) + 1;
  };
  try {
    const response = await fetch(url, { headers });
    await response.arrayBuffer();
    if (response.ok) result.reads += 1;
    else failed(String(response.status));
  } catch {
    failed('error');
  }
}
