import { describe, expect, it } from 'vitest';
import { compileRequest } from '../compile-request.ts';
import { wireResponse } from '../test-support/wire-bytes.ts';
import { optionalUserIdHeaders, sessionIdPath, userIdHeaders } from '../../../../schemas/http/request-params.ts';
import { costTimelineQuery } from '../../../../schemas/http/query-params.ts';

describe('x-user-id header', () => {
  const check = compileRequest({ query: costTimelineQuery, headers: userIdHeaders });

  it('reports an absent header as missing with input null (row 2), after the query errors', () => {
    expect(wireResponse(check, { query: { period: 'hourly' }, headers: {} })).toEqual({
      status: 422,
      body:
        `{"detail":[{"type":"string_pattern_mismatch","loc":["query","period"],"msg":"String should match pattern '^(daily|weekly|monthly)$'","input":"hourly","ctx":{"pattern":"^(daily|weekly|monthly)$"}},` +
        '{"type":"missing","loc":["header","x-user-id"],"msg":"Field required","input":null}]}',
    });
  });

  it('accepts an empty header as a valid string (row 2b)', () => {
    expect(check({ query: {}, headers: { 'x-user-id': '' } })).toMatchObject({
      ok: true,
      value: { headers: { 'x-user-id': '' } },
    });
  });

  it('lets a route answer an absent header itself when it declares it optional', () => {
    expect(compileRequest({ headers: optionalUserIdHeaders })({ headers: {} })).toEqual({
      ok: true,
      value: { headers: {} },
    });
  });
});

describe('{session_id} path parameter', () => {
  it('accepts any string', () => {
    expect(compileRequest({ path: sessionIdPath })({ path: { session_id: 'not a uuid' } })).toEqual({
      ok: true,
      value: { path: { session_id: 'not a uuid' } },
    });
  });
});
