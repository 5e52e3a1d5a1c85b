import type { ClickHouse } from '../../services/shared/clickhouse/client.ts';
import {
  eventKey,
  sessionKey,
  type RecordSource,
  type SessionMark,
} from '../../services/shared/clickhouse/tables/usage-events.ts';

/** What ClickHouse answers an insert whose rows it refuses for what they hold (a type mismatch). */
export const REFUSAL = Object.assign(new Error('Cannot parse input'), { code: '53', type: 'TYPE_MISMATCH' });

export interface FakeClickHouseOptions {
  /** Every insert holding a row this picks is refused for its data (REFUSAL). */
  readonly refuse?: (row: Record<string, unknown>) => boolean;
  /** An error for an insert into `table` (an outage), or null to take it. */
  readonly fail?: (table: string) => Error | null;
  /** The events the stored-id lookup finds (eventKey). */
  readonly stored?: ReadonlySet<string>;
  /** Where the stored events' rows came from (eventKey → their sources), for the lookup of stored places. */
  readonly places?: ReadonlyMap<string, readonly RecordSource[]>;
  /** Where the steps are noted (a test's own list, shared with other fakes); absent: a new list. */
  readonly steps?: string[];
  /** Noted with the keys (eventKey) each lookup asked for. */
  readonly asked?: string[][];
  /** The stored reversals: eventKey of the row each negates → the reversals' ids. */
  readonly reversals?: ReadonlyMap<string, readonly string[]>;
  /** The marked rows of each session (sessionKey), for the lookup of marks (not noted in `steps`). */
  readonly marked?: ReadonlyMap<string, readonly SessionMark[]>;
  /** Noted with the sessions (sessionKey) each lookup of marks asked for. */
  readonly askedSessions?: string[][];
}

/**
 * The port of ClickHouse the consumer's steps use, in memory (unit tests only): the inserts it took (rows
 * keyed, whatever format they went in, with their deduplication token and the table's short name), and
 * a stored-id lookup answered from `stored`, a lookup of stored places from `places`, one of stored
 * reversals from `reversals`, and one of marked sessions from `marked`. `steps` notes each insert and lookup in order ('lookup', 'where', 'reversals').
 */
export function fakeClickHouse({
  refuse = () => false,
  fail = () => null,
  stored = new Set(),
  places = new Map(),
  steps = [],
  asked = [],
  reversals = new Map(),
  marked = new Map(),
  askedSessions = [],
}: FakeClickHouseOptions = {}) {
  const inserts: { table: string; token: string; rows: Record<string, unknown>[] }[] = [];
  const client = {
    insert: async (params: {
      table: string;
      values: unknown[];
      columns?: string[];
      clickhouse_settings: { insert_deduplication_token: string };
    }) => {
      const table = params.table.slice(params.table.indexOf('.') + 1);
      const rows = params.values.map((value) =>
        params.columns === undefined
          ? (value as Record<string, unknown>)
          : Object.fromEntries(params.columns.map((column, i) => [column, (value as unknown[])[i]])),
      );
      steps.push(`insert ${table}`);
      const failure = fail(table);
      if (failure !== null) throw failure;
      if (rows.some(refuse)) throw REFUSAL;
      inserts.push({ table, token: params.clickhouse_settings.insert_deduplication_token, rows });
    },
    query: async ({
      query,
      query_params,
    }: {
      query: string;
      query_params: { users: string[]; ids: string[]; targets?: string[]; sessions?: string[] };
    }) => {
      if (query.includes('usage_session_firsts')) {
        const sessions = query_params.sessions!.map((id, i) => sessionKey(query_params.users[i]!, id));
        askedSessions.push(sessions);
        return {
          json: async () =>
            sessions.flatMap((key) =>
              (marked.get(key) ?? []).map((mark) => ({
                mark_session: key.slice(0, key.indexOf(':')),
                mark_user: key.slice(key.indexOf(':') + 1),
                mark_event: mark.event_id,
                mark_agent: mark.agent_id,
                mark_session_first: mark.session_first ? 1 : 0,
                mark_agent_first: mark.agent_session_first ? 1 : 0,
              })),
            ),
        };
      }
      if (query.includes('reverses IN')) {
        steps.push('reversals');
        const targets = query_params.targets!.map((id, i) => eventKey(query_params.users[i]!, id));
        return {
          json: async () =>
            targets.flatMap((key) =>
              (reversals.get(key) ?? []).map((reversal) => ({
                stored_user: key.slice(key.indexOf(':') + 1),
                reversed: key.slice(0, key.indexOf(':')),
                reversal,
              })),
            ),
        };
      }
      const where = query.includes('kafka_offset');
      steps.push(where ? 'where' : 'lookup');
      const keys = query_params.ids.map((id, i) => eventKey(query_params.users[i]!, id));
      asked.push(keys);
      const row = (key: string) => ({
        stored_id: key.slice(0, key.indexOf(':')),
        stored_user: key.slice(key.indexOf(':') + 1),
      });
      return {
        json: async () =>
          where
            ? keys.flatMap((key) => (places.get(key) ?? []).map((place) => ({ ...row(key), ...place })))
            : keys.filter((key) => stored.has(key)).map(row),
      };
    },
  };
  const ch = { client, database: 'db', embedded: true, cluster: null } as unknown as ClickHouse;
  return { ch, inserts, steps };
}
