import type { DriveResult } from '../load/drive.ts';
import type { BenchSession } from './callmeter-api.ts';
import { CLIENTS as MANY_CLIENTS } from '../phases/kafka-ingest.ts';
import { drive, say, type Server } from './processes.ts';

/** The few connections of a small fleet (the many of a loaded one: the ingest phase's CLIENTS). */
export const FEW_CLIENTS = 4;

/** One round of single events through a process, each load beside the bare route's just before it. */
export interface BesideBare {
  readonly bareMany: DriveResult;
  readonly many: DriveResult;
  readonly bareFew: DriveResult;
  readonly few: DriveResult;
}

/**
 * The bare Koa route at MANY_CLIENTS connections, `url` at as many, the bare route at FEW_CLIENTS, `url`
 * at as few: the order every one-process shape (embedded, over Kafka) is measured in, so that each figure
 * has its baseline from the minute before it.
 */
export async function singleEventsBesideBare(
  label: string,
  bare: Server,
  url: string,
  sessions: readonly BenchSession[],
  loadMs: number,
): Promise<BesideBare> {
  const bareOf = (connections: number) =>
    drive({ url: bare.url, mode: 'bare', durationMs: loadMs, connections, sessions: [{ id: 'x', user_id: 'x' }] });
  const singleOf = (connections: number) => drive({ url, mode: 'single', durationMs: loadMs, connections, sessions });
  say(`${label}: single events at ${MANY_CLIENTS} connections, beside the bare route`);
  const bareMany = await bareOf(MANY_CLIENTS);
  const many = await singleOf(MANY_CLIENTS);
  say(`${label}: single events at ${FEW_CLIENTS} connections, beside the bare route`);
  const bareFew = await bareOf(FEW_CLIENTS);
  const few = await singleOf(FEW_CLIENTS);
  return { bareMany, many, bareFew, few };
}
