import { describe, expect, it } from 'vitest';
import { chdbConnectionPool, sqlString, withSessionParams, type ClientConnection } from './chdb-pool.ts';

describe('withSessionParams', () => {
  it('sends each parameter as the text an HTTP server gets, quoted as a string literal, before the statement', () => {
    const statement = withSessionParams({
      query: 'SELECT {user:String}, {ids:Array(String)}, {from:Int64}',
      query_params: { user: "o'brien\\\t", ids: ['a', "b'c"], from: 1_700_000_000_000 },
      format: 'JSONEachRow',
    });
    expect(statement).toEqual({
      query:
        "SET param_user = 'o\\\\\\'brien\\\\\\\\\\\\t'; SET param_ids = '[\\'a\\',\\'b\\\\\\'c\\']'; SET param_from = '1700000000000'; SELECT {user:String}, {ids:Array(String)}, {from:Int64}",
      query_params: undefined,
      format: 'JSONEachRow',
    });
  });

  it('raises the parser’s limit on a statement’s size first when the values would pass it', () => {
    const ids = Array.from({ length: 10_000 }, (_, i) => `event-${i}`.padEnd(36, '0'));
    const statement = withSessionParams({ query: 'SELECT {ids:Array(String)}', query_params: { ids } });
    const limit = /^SET max_query_size = (\d+); SET param_ids = /.exec(statement.query);
    expect(Number(limit?.[1])).toBeGreaterThan(Buffer.byteLength(statement.query));
    expect(withSessionParams({ query: 'SELECT {id:String}', query_params: { id: 'one' } }).query).toMatch(
      /^SET param_id/,
    );
  });

  it('leaves a statement without parameters as it is', () => {
    const statement = { query: 'SELECT 1' };
    expect(withSessionParams(statement)).toBe(statement);
  });

  it('refuses a placeholder without a value, which would otherwise read the session’s last one', () => {
    expect(() => withSessionParams({ query: 'SELECT { user : String }', query_params: {} })).toThrow(
      'query parameter user is not set',
    );
    expect(() => withSessionParams({ query: 'SELECT {a:String}, {b:String}', query_params: { a: 'x' } })).toThrow(
      'query parameter b is not set',
    );
  });

  it('refuses a parameter name that is not an identifier', () => {
    expect(() => withSessionParams({ query: 'SELECT 1', query_params: { 'x = 1; DROP TABLE t; --': 1 } })).toThrow(
      /is not an identifier/,
    );
  });
});

describe('sqlString', () => {
  it('escapes the backslash and the quote, the only characters that end or escape a literal', () => {
    expect(sqlString(`a'b\\c\n`)).toBe(`'a\\'b\\\\c\n'`);
  });
});

describe('chdbConnectionPool', () => {
  /** A connection whose statements end when the test says, recording what ran. */
  function gatedConnection(ran: string[]) {
    const gates: (() => void)[] = [];
    const connection = {
      query: async (params: { query: string; abort_signal?: AbortSignal }) => {
        ran.push(params.query);
        expect(params.abort_signal).toBeUndefined();
        await new Promise<void>((resolve) => gates.push(resolve));
        return { query_id: params.query };
      },
      close: async () => undefined,
    } as unknown as ClientConnection;
    return { connection, finish: () => gates.shift()?.() };
  }

  it('drops a statement still waiting for a connection when its signal aborts: it never runs', async () => {
    const ran: string[] = [];
    const { connection, finish } = gatedConnection(ran);
    const pool = chdbConnectionPool([connection]);
    const running = pool.query({ query: 'SELECT 1' } as never);
    const leaving = new AbortController();
    const queued = pool.query({ query: 'SELECT 2', abort_signal: leaving.signal } as never);
    const after = pool.query({ query: 'SELECT 3' } as never);
    await Promise.resolve();
    expect(pool.queue.waiting).toBe(2);
    leaving.abort();
    await expect(queued).rejects.toThrow(/aborted/);
    expect([pool.queue.waiting, pool.queue.withdrawn]).toEqual([1, 1]);
    finish();
    await running;
    await new Promise((resolve) => setTimeout(resolve, 1));
    finish();
    await after;
    expect(ran).toEqual(['SELECT 1', 'SELECT 3']);
  });

  it('answers a running statement’s abort at once but keeps its connection until the engine is done', async () => {
    const ran: string[] = [];
    const { connection, finish } = gatedConnection(ran);
    const pool = chdbConnectionPool([connection]);
    const leaving = new AbortController();
    const running = pool.query({ query: 'SELECT 1', abort_signal: leaving.signal } as never);
    await new Promise((resolve) => setTimeout(resolve, 1));
    const next = pool.query({ query: 'SELECT 2' } as never);
    leaving.abort();
    await expect(running).rejects.toThrow(/aborted/);
    expect([pool.queue.running, pool.queue.waiting, ran]).toEqual([1, 1, ['SELECT 1']]);
    finish();
    await new Promise((resolve) => setTimeout(resolve, 1));
    expect(ran).toEqual(['SELECT 1', 'SELECT 2']);
    finish();
    await next;
  });
});
