import path from 'node:path';
import type { BenchSettings } from '../settings.ts';
import { createSessions, type BenchSession } from '../support/callmeter-api.ts';
import { singleEventsBesideBare } from '../support/beside-bare.ts';
import { drive, say, startServer, type Server } from '../support/processes.ts';
import { ratioOf, type Metric, type SteadyMetric } from '../support/results.ts';
import { inRounds } from '../support/rounds.ts';
import { CLIENTS } from './kafka-ingest.ts';

/**
 * The embedded `npm start`, one round: the bare Koa route at 64 connections, callmeter at 64, the bare
 * route at 4 connections (a small fleet), callmeter at 4; each figure beside the baseline just before it.
 */
export interface EmbeddedRound {
  readonly bare: Server;
  readonly embedded: Server;
  readonly sessions: readonly BenchSession[];
  readonly loadMs: number;
}

export async function embeddedRound({ bare, embedded, sessions, loadMs }: EmbeddedRound): Promise<Metric[]> {
  const { bareMany, many, bareFew, few } = await singleEventsBesideBare(
    'the embedded npm start',
    bare,
    embedded.url,
    sessions,
    loadMs,
  );
  return [
    {
      name: 'embedded_single_events_per_s',
      value: many.events_per_s,
      unit: 'events/s',
      baseline: bareMany.events_per_s,
      ratio: ratioOf(many.events_per_s, bareMany.events_per_s),
      target: '>= 0.3',
    },
    {
      name: 'embedded_single_4_connections_events_per_s',
      value: few.events_per_s,
      unit: 'events/s',
      baseline: bareFew.events_per_s,
      ratio: ratioOf(few.events_per_s, bareFew.events_per_s),
      target: '>= 200 events/s',
    },
    {
      name: 'embedded_single_4_connections_p50_ms',
      value: few.p50_ms,
      unit: 'ms',
      baseline: bareFew.p50_ms,
      target: '<= 25',
    },
    { name: 'bare_koa_beside_embedded_requests_per_s', value: bareMany.events_per_s, unit: 'requests/s' },
    { name: 'bare_koa_4_connections_requests_per_s', value: bareFew.events_per_s, unit: 'requests/s' },
  ];
}

/** The embedded process, warmed up once, then `settings.runs` rounds beside the bare route. */
export async function embeddedPhase(folder: string, settings: BenchSettings, bare: Server): Promise<SteadyMetric[]> {
  const embedded = await startServer('services/main.ts', { DATA_DIR: path.join(folder, 'embedded') });
  try {
    const sessions = await createSessions(embedded.url, 'bench', 50);
    say('the embedded npm start: warming up');
    await drive({ url: embedded.url, mode: 'single', durationMs: settings.warmupMs, connections: CLIENTS, sessions });
    return await inRounds(settings.runs, () => embeddedRound({ bare, embedded, sessions, loadMs: settings.loadMs }));
  } finally {
    await embedded.stop();
  }
}
