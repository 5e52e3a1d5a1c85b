import { describe, expect, it } from 'vitest';
import { sqlString, withSessionParams } from './chdb-pool.ts';

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
