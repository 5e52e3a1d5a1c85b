import { describe, expect, it } from 'vitest';
import { compileRequest } from '../compile-request.ts';
import { wireResponse } from '../test-support/wire-bytes.ts';
import {
  costByAgentQuery,
  costSummaryQuery,
  costTimelineQuery,
  sessionListQuery,
} from '../../../../schemas/http/query-params.ts';

const detail = (...items: string[]) => ({ status: 422, body: `{"detail":[${items.join(',')}]}` });
const pattern = '^(daily|weekly|monthly)$';

describe('GET /api/costs/timeline query', () => {
  const check = compileRequest({ query: costTimelineQuery });
  const item = (input: string) =>
    `{"type":"string_pattern_mismatch","loc":["query","period"],"msg":"String should match pattern '${pattern}'","input":${input},"ctx":{"pattern":"${pattern}"}}`;

  it('reports a period outside the pattern as string_pattern_mismatch (row 12)', () => {
    expect(wireResponse(check, { query: { period: 'yearly' } })).toEqual(detail(item('"yearly"')));
  });

  it('validates an empty period rather than treating it as missing', () => {
    expect(wireResponse(check, { query: { period: '' } })).toEqual(detail(item('""')));
  });

  it('defaults to daily and reads the last of repeated keys', () => {
    expect(check({ query: {} })).toEqual({ ok: true, value: { query: { period: 'daily' } } });
    expect(check({ query: { period: ['yearly', 'weekly'], start_date: '2026-11-01' } })).toEqual({
      ok: true,
      value: { query: { period: 'weekly', start_date: '2026-11-01' } },
    });
  });
});

describe('GET /api/costs/by-agent and /summary queries', () => {
  it('bounds limit to 1..1000 with a default of 50', () => {
    const check = compileRequest({ query: costByAgentQuery });
    expect(check({ query: {} })).toEqual({ ok: true, value: { query: { limit: 50 } } });
    expect(wireResponse(check, { query: { limit: '0' } })).toEqual(
      detail(
        '{"type":"greater_than_equal","loc":["query","limit"],"msg":"Input should be greater than or equal to 1","input":"0","ctx":{"ge":1}}',
      ),
    );
  });

  it('takes tz as a plain string, and format as json or csv only', () => {
    expect(compileRequest({ query: costSummaryQuery })({ query: { tz: 'Europe/Paris' } })).toEqual({
      ok: true,
      value: { query: { tz: 'Europe/Paris' } },
    });
    const check = compileRequest({ query: costByAgentQuery });
    expect(check({ query: { format: 'csv' } })).toEqual({ ok: true, value: { query: { format: 'csv', limit: 50 } } });
    expect(wireResponse(check, { query: { format: 'xml' } })).toEqual(
      detail(
        '{"type":"literal_error","loc":["query","format"],"msg":"Input should be \'json\' or \'csv\'","input":"xml","ctx":{"expected":"\'json\' or \'csv\'"}}',
      ),
    );
  });
});

describe('GET /api/sessions/ query', () => {
  const check = compileRequest({ query: sessionListQuery });

  it('defaults page and limit and reads them as ints', () => {
    expect(check({ query: { page: '2', limit: '25' } })).toEqual({
      ok: true,
      value: { query: { page: 2, limit: 25 } },
    });
    expect(check({ query: {} })).toEqual({ ok: true, value: { query: { page: 1, limit: 10 } } });
  });

  it('reports page 0, limit 1001 and a non-number in field order', () => {
    expect(wireResponse(check, { query: { limit: '1001', page: '0' } })).toEqual(
      detail(
        '{"type":"greater_than_equal","loc":["query","page"],"msg":"Input should be greater than or equal to 1","input":"0","ctx":{"ge":1}}',
        '{"type":"less_than_equal","loc":["query","limit"],"msg":"Input should be less than or equal to 1000","input":"1001","ctx":{"le":1000}}',
      ),
    );
    expect(wireResponse(check, { query: { page: 'x' } })).toEqual(
      detail(
        '{"type":"int_parsing","loc":["query","page"],"msg":"Input should be a valid integer, unable to parse string as an integer","input":"x"}',
      ),
    );
  });
});
