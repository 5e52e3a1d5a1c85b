/**
 * The query benchmark's data: one user with `large` events, one with `small` over the same year, and
 * other users beside them. Generated inside ClickHouse (INSERT … SELECT FROM numbers), so loading
 * 10 million rows takes about a minute instead of an hour of JSON.
 */
export interface Dataset {
  readonly users: readonly BenchUser[];
  /** Other tenants' events, spread over OTHER_USERS users. */
  readonly otherEvents: number;
}

export interface BenchUser {
  readonly id: string;
  /** Distinct per user: the first block of every id the user's rows get. */
  readonly index: number;
  readonly events: number;
  readonly label: string;
}

export const SPAN_DAYS = 365;
export const EVENTS_PER_SESSION = 50;
export const AGENTS = 50;
export const OTHER_USERS = 20;
/** The data ends here, so that the same data gives the same ranges on any day it is measured. */
export const SPAN_END_MS = Date.UTC(2026, 10, 1);

export function labelOf(events: number): string {
  return events >= 1_000_000 ? `${events / 1_000_000}m` : `${events / 1000}k`;
}

export function datasetOf(largeEvents: number, smallEvents: number): Dataset {
  return {
    users: [
      { id: `bench-${labelOf(smallEvents)}`, index: 1, events: smallEvents, label: labelOf(smallEvents) },
      { id: `bench-${labelOf(largeEvents)}`, index: 2, events: largeEvents, label: labelOf(largeEvents) },
    ],
    otherEvents: Math.max(OTHER_USERS, Math.floor(largeEvents / 10)),
  };
}

/** The session id of the user's n-th session, as the loader made it. */
export function sessionIdOf(user: Pick<BenchUser, 'index'>, session: number): string {
  return `${user.index.toString(16).padStart(8, '0')}-0000-4000-9000-${session.toString(16).padStart(12, '0')}`;
}

/** The figures of the 10-million-event dataset are the ones kept; other sizes (CI's) go beside them. */
export function queriesResultFile(largeEvents: number): string {
  return largeEvents === 10_000_000 ? 'queries.json' : `queries-${labelOf(largeEvents)}.json`;
}
