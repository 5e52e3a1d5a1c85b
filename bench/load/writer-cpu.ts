import { createSessions, eventCount } from '../support/callmeter-api.ts';
import { cpuTimeMs, drive, say, sleep, startServer } from '../support/processes.ts';
import { ratioOf, type Metric } from '../support/results.ts';

/**
 * What the embedded writer costs a write-only load (docs/performance.md#the-cost-of-a-round): one tenant
 * posting single usage events at a modest pace, as a small fleet's workers do between dashboard reads, in
 * a fresh embedded process; the process's CPU over the load, with its rounds gathered as configured (the
 * default) and, as the baseline, every record stored as it comes (JOURNAL_GATHER_MS=0). Nothing reads
 * meanwhile, so nothing cuts the gathering short; every event is checked stored afterwards.
 */
export interface WriterCpuOptions {
  readonly dataDir: string;
  readonly loadMs: number;
  readonly eventsPerS: number;
}

const USER = 'bench-writer';

export async function writerCpu(options: WriterCpuOptions): Promise<Metric[]> {
  const eager = await processCpu({ ...options, dataDir: `${options.dataDir}-eager` }, { JOURNAL_GATHER_MS: '0' });
  const gathered = await processCpu(options, {});
  return [
    {
      name: 'embedded_writer_cpu_pct',
      value: gathered,
      unit: '%',
      baseline: eager,
      ratio: ratioOf(gathered, eager),
    },
    { name: 'embedded_writer_cpu_eager_pct', value: eager, unit: '%' },
    { name: 'embedded_writer_events_per_s', value: options.eventsPerS, unit: 'events/s' },
  ];
}

/** The process's CPU over the load, in % of one core. */
async function processCpu(options: WriterCpuOptions, env: Record<string, string>): Promise<number> {
  const server = await startServer('services/main.ts', { DATA_DIR: options.dataDir, ...env });
  try {
    const sessions = await createSessions(server.url, USER, 10);
    // The start's own work (migrations, the first refreshes) settles before the measure.
    await sleep(2_000);
    const pid = server.child.pid!;
    const before = cpuTimeMs(pid);
    const load = await drive({
      url: server.url,
      mode: 'single',
      durationMs: options.loadMs,
      connections: 2,
      rate: options.eventsPerS,
      sessions,
    });
    const pct = Math.round(((cpuTimeMs(pid) - before) / load.elapsed_ms) * 100);
    const stored = await eventCount(server.url, USER);
    if (stored !== load.events) throw new Error(`writer cpu: ${load.events} events acknowledged, ${stored} stored`);
    say(
      `writer cpu (${env.JOURNAL_GATHER_MS === '0' ? 'every record at once' : 'gathered'}): ${pct} % over ${load.events} events`,
    );
    return pct;
  } finally {
    await server.stop();
  }
}
