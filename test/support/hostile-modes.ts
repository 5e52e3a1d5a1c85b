import { startCallmeter, type CallmeterProcess } from './callmeter-process.ts';
import { isolate, serviceEnv } from './harness.ts';

/** The processes of one mode of a hostile case. */
export interface Running {
  /** Where usage and sessions are posted (the one process when embedded). */
  readonly ingest: CallmeterProcess;
  /** The process with the consumer and its engine: the cost views (the one process when embedded). */
  readonly query: CallmeterProcess;
  readonly stop: () => Promise<unknown>;
}

/** The environment each process of the two modes adds. */
export interface ModesEnv {
  /** Every process of both modes. */
  readonly all?: Record<string, string>;
  /** The embedded process only. */
  readonly embedded?: Record<string, string>;
  /** The ingest process apart only. */
  readonly ingest?: Record<string, string>;
  /** The consumer and query process apart only. */
  readonly query?: Record<string, string>;
}

/**
 * The two modes a hostile case runs on: the embedded process (isolated as `name`), and ingest apart from
 * its consumer and query process over Kafka and Redis (isolated as `${name}-kafka`).
 */
export function hostileModes(name: string, env: ModesEnv = {}) {
  const { all = {}, embedded = {}, ingest = {}, query = {} } = env;
  return [
    {
      name: 'the embedded process',
      start: async (): Promise<Running> => {
        const app = await startCallmeter({ DATA_DIR: isolate(name).dataDir, LOG_LEVEL: 'warn', ...all, ...embedded });
        return { ingest: app, query: app, stop: () => app.stop() };
      },
    },
    {
      name: 'ingest apart over Kafka and Redis',
      start: async (): Promise<Running> => {
        const isolation = isolate(`${name}-kafka`);
        const ingestProcess = await startCallmeter(
          serviceEnv(isolation, { SERVICES: 'ingest', DATA_DIR: `${isolation.dataDir}/ingest`, ...all, ...ingest }),
        );
        const queryProcess = await startCallmeter(
          serviceEnv(isolation, { SERVICES: 'consumer,query', ...all, ...query }),
        );
        return {
          ingest: ingestProcess,
          query: queryProcess,
          stop: () => Promise.allSettled([ingestProcess.stop(), queryProcess.stop()]),
        };
      },
    },
  ] as const;
}
