import { describe, expect, it } from 'vitest';
import { compileRequest } from './compile-request.ts';
import { pyDictOf } from './py-value.ts';
import type { ListSchema, ModelSchema } from '../../../schemas/dialect/schema-dialect.ts';
import { jsonBody, wireResponse } from './test-support/wire-bytes.ts';
import { toPythonJson } from './to-python-json.ts';

/** One field per pydantic type and constraint; the expected bytes come from FastAPI 0.165 + pydantic 2.12. */
const probeModel = {
  type: 'object',
  properties: {
    name: { 'x-py': 'str', minLength: 2, maxLength: 5, pattern: '^[a-z]+$' },
    count: { 'x-py': 'int', exclusiveMinimum: 0, maximum: 10 },
    price: { 'x-py': 'decimal', minimum: 0 },
    at: { 'x-py': 'datetime' },
    id: { 'x-py': 'uuid' },
    flag: { 'x-py': 'bool' },
    data: { 'x-py': 'dict' },
    kind: { 'x-py': 'literal', enum: ['a', 'b'] },
  },
  required: ['name'],
} as const satisfies ModelSchema;

const probeList = { type: 'array', items: probeModel, maxItems: 2 } as const satisfies ListSchema;

const checkModel = compileRequest({ body: probeModel });
const checkList = compileRequest({ body: probeList });
const modelReply = (text: string) => wireResponse(checkModel, { body: jsonBody(text) });
const detail = (item: string) => ({ status: 422, body: `{"detail":[${item}]}` });

describe('each pydantic error type comes out byte for byte', () => {
  it.each([
    ['missing', '{}', '{"type":"missing","loc":["body","name"],"msg":"Field required","input":{}}'],
    [
      'string_type',
      '{"name":5}',
      '{"type":"string_type","loc":["body","name"],"msg":"Input should be a valid string","input":5}',
    ],
    [
      'string_too_short',
      '{"name":"a"}',
      '{"type":"string_too_short","loc":["body","name"],"msg":"String should have at least 2 characters","input":"a","ctx":{"min_length":2}}',
    ],
    [
      'string_too_long',
      '{"name":"abcdef"}',
      '{"type":"string_too_long","loc":["body","name"],"msg":"String should have at most 5 characters","input":"abcdef","ctx":{"max_length":5}}',
    ],
    [
      'string_pattern_mismatch',
      '{"name":"AB"}',
      `{"type":"string_pattern_mismatch","loc":["body","name"],"msg":"String should match pattern '^[a-z]+$'","input":"AB","ctx":{"pattern":"^[a-z]+$"}}`,
    ],
    [
      'greater_than',
      '{"name":"ab","count":0}',
      '{"type":"greater_than","loc":["body","count"],"msg":"Input should be greater than 0","input":0,"ctx":{"gt":0}}',
    ],
    [
      'less_than_equal',
      '{"name":"ab","count":11}',
      '{"type":"less_than_equal","loc":["body","count"],"msg":"Input should be less than or equal to 10","input":11,"ctx":{"le":10}}',
    ],
    [
      'int_parsing',
      '{"name":"ab","count":"x"}',
      '{"type":"int_parsing","loc":["body","count"],"msg":"Input should be a valid integer, unable to parse string as an integer","input":"x"}',
    ],
    [
      'int_from_float',
      '{"name":"ab","count":1.5}',
      '{"type":"int_from_float","loc":["body","count"],"msg":"Input should be a valid integer, got a number with a fractional part","input":1.5}',
    ],
    [
      'int_type',
      '{"name":"ab","count":[]}',
      '{"type":"int_type","loc":["body","count"],"msg":"Input should be a valid integer","input":[]}',
    ],
    [
      'finite_number (int)',
      '{"name":"ab","count":1e400}',
      '{"type":"finite_number","loc":["body","count"],"msg":"Input should be a finite number","input":null}',
    ],
    [
      'decimal_type',
      '{"name":"ab","price":null}',
      '{"type":"decimal_type","loc":["body","price"],"msg":"Decimal input should be an integer, float, string or Decimal object","input":null}',
    ],
    [
      'decimal_parsing',
      '{"name":"ab","price":"lots"}',
      '{"type":"decimal_parsing","loc":["body","price"],"msg":"Input should be a valid decimal","input":"lots"}',
    ],
    [
      'finite_number (decimal)',
      '{"name":"ab","price":"Infinity"}',
      '{"type":"finite_number","loc":["body","price"],"msg":"Input should be a finite number","input":"Infinity"}',
    ],
    [
      'greater_than_equal',
      '{"name":"ab","price":-0.5}',
      '{"type":"greater_than_equal","loc":["body","price"],"msg":"Input should be greater than or equal to 0","input":-0.5,"ctx":{"ge":0}}',
    ],
    [
      'datetime_type',
      '{"name":"ab","at":true}',
      '{"type":"datetime_type","loc":["body","at"],"msg":"Input should be a valid datetime","input":true}',
    ],
    [
      'datetime_from_date_parsing',
      '{"name":"ab","at":"not-a-date"}',
      '{"type":"datetime_from_date_parsing","loc":["body","at"],"msg":"Input should be a valid datetime or date, invalid character in year","input":"not-a-date","ctx":{"error":"invalid character in year"}}',
    ],
    [
      'datetime_parsing',
      '{"name":"ab","at":1e20}',
      '{"type":"datetime_parsing","loc":["body","at"],"msg":"Input should be a valid datetime, dates after 9999 are not supported as unix timestamps","input":1e+20,"ctx":{"error":"dates after 9999 are not supported as unix timestamps"}}',
    ],
    [
      'uuid_parsing',
      '{"name":"ab","id":"not-a-uuid"}',
      '{"type":"uuid_parsing","loc":["body","id"],"msg":"Input should be a valid UUID, invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `n` at 1","input":"not-a-uuid","ctx":{"error":"invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `n` at 1"}}',
    ],
    [
      'uuid_type',
      '{"name":"ab","id":123}',
      '{"type":"uuid_type","loc":["body","id"],"msg":"UUID input should be a string, bytes or UUID object","input":123}',
    ],
    [
      'bool_parsing',
      '{"name":"ab","flag":"maybe"}',
      '{"type":"bool_parsing","loc":["body","flag"],"msg":"Input should be a valid boolean, unable to interpret input","input":"maybe"}',
    ],
    [
      'bool_type',
      '{"name":"ab","flag":[]}',
      '{"type":"bool_type","loc":["body","flag"],"msg":"Input should be a valid boolean","input":[]}',
    ],
    [
      'dict_type',
      '{"name":"ab","data":"abc"}',
      '{"type":"dict_type","loc":["body","data"],"msg":"Input should be a valid dictionary","input":"abc"}',
    ],
    [
      'literal_error',
      '{"name":"ab","kind":"c"}',
      `{"type":"literal_error","loc":["body","kind"],"msg":"Input should be 'a' or 'b'","input":"c","ctx":{"expected":"'a' or 'b'"}}`,
    ],
    [
      'model_attributes_type',
      '[1,2]',
      '{"type":"model_attributes_type","loc":["body"],"msg":"Input should be a valid dictionary or object to extract fields from","input":[1,2]}',
    ],
  ])('%s', (_type, body, item) => {
    expect(modelReply(body)).toEqual(detail(item));
  });

  it('int_parsing_size for a numeric string past 4,300 digits', () => {
    const digits = '1'.repeat(4301);
    expect(modelReply(`{"name":"ab","count":"${digits}"}`)).toEqual(
      detail(
        `{"type":"int_parsing_size","loc":["body","count"],"msg":"Unable to parse input string as an integer, exceeded maximum size","input":"${digits}"}`,
      ),
    );
  });

  it('missing for an absent body, with input null (row 4b)', () => {
    expect(wireResponse(checkModel, { body: jsonBody('') })).toEqual(
      detail('{"type":"missing","loc":["body"],"msg":"Field required","input":null}'),
    );
  });

  it('model_attributes_type echoing the raw text for a non-JSON content type (row 14)', () => {
    expect(wireResponse(checkModel, { body: jsonBody('{"name": "Foo"}', 'text/plain') })).toEqual(
      detail(
        '{"type":"model_attributes_type","loc":["body"],"msg":"Input should be a valid dictionary or object to extract fields from","input":"{\\"name\\": \\"Foo\\"}"}',
      ),
    );
  });
});

describe('errors are collected and ordered as FastAPI orders them', () => {
  it('reports every field, in declaration order, whatever the key order of the body', () => {
    const body = '{"kind":"c","data":1,"flag":2,"id":1,"at":true,"price":null,"count":0,"name":1,"extra":1}';
    const types = JSON.parse(modelReply(body).body).detail.map((item: { type: string }) => item.type);
    expect(types).toEqual([
      'string_type',
      'greater_than',
      'decimal_type',
      'datetime_type',
      'uuid_type',
      'bool_parsing',
      'dict_type',
      'literal_error',
    ]);
  });

  it('orders path, query, header, then body', () => {
    const check = compileRequest({
      path: { type: 'object', properties: { n: { 'x-py': 'int', minimum: 0, maximum: 9 } }, required: ['n'] },
      query: { type: 'object', properties: { limit: { 'x-py': 'int', minimum: 1, maximum: 1000, default: 50 } } },
      headers: { type: 'object', properties: { 'x-user-id': { 'x-py': 'str' } }, required: ['x-user-id'] },
      body: probeModel,
    });
    const reply = wireResponse(check, { path: { n: 'x' }, query: { limit: '0' }, headers: {}, body: jsonBody('{}') });
    expect(JSON.parse(reply.body).detail.map((item: { loc: unknown }) => item.loc)).toEqual([
      ['path', 'n'],
      ['query', 'limit'],
      ['header', 'x-user-id'],
      ['body', 'name'],
    ]);
  });

  it('reports a bad JSON body alone, before any other part is looked at', () => {
    const check = compileRequest({
      headers: { type: 'object', properties: { 'x-user-id': { 'x-py': 'str' } }, required: ['x-user-id'] },
      body: probeModel,
    });
    expect(wireResponse(check, { headers: {}, body: jsonBody('{"a":}') })).toEqual(
      detail(
        '{"type":"json_invalid","loc":["body",5],"msg":"JSON decode error","input":{},"ctx":{"error":"Expecting value"}}',
      ),
    );
  });
});

describe('list bodies validate each item alone', () => {
  it('locates item errors at ["body", index, field]', () => {
    expect(wireResponse(checkList, { body: jsonBody('[1,{"name":"x"}]') })).toEqual(
      detail(
        '{"type":"model_attributes_type","loc":["body",0],"msg":"Input should be a valid dictionary or object to extract fields from","input":1},' +
          '{"type":"string_too_short","loc":["body",1,"name"],"msg":"String should have at least 2 characters","input":"x","ctx":{"min_length":2}}',
      ),
    );
  });

  it('reports a list over its limit with too_long alone', () => {
    expect(wireResponse(checkList, { body: jsonBody('[{"name":"ab"},1,{"name":"x"}]') })).toEqual(
      detail(
        '{"type":"too_long","loc":["body"],"msg":"List should have at most 2 items after validation, not 3","input":[{"name":"ab"},1,{"name":"x"}],"ctx":{"field_type":"List","max_length":2,"actual_length":3}}',
      ),
    );
  });

  it('reports a body that is not a list with list_type', () => {
    expect(wireResponse(checkList, { body: jsonBody('{}') })).toEqual(
      detail('{"type":"list_type","loc":["body"],"msg":"Input should be a valid list","input":{}}'),
    );
  });
});

describe('a valid request gives pydantic values typed from the schema', () => {
  it('coerces laxly, fills defaults, drops unknown keys and leaves the received value untouched', () => {
    const received = pyDictOf({
      name: 'ab',
      count: '5',
      price: '2.50',
      at: '2026-01-01',
      id: '{550E8400-E29B-41D4-A716-446655440000}',
      flag: 'yes',
      data: pyDictOf({ k: 1n }),
      unknown: true,
    });
    const before = toPythonJson(received);
    const parsed = checkModel({ body: received });
    expect(parsed).toEqual({
      ok: true,
      value: {
        body: {
          name: 'ab',
          count: 5,
          price: '2.5',
          at: new Date('2026-01-01T00:00:00Z'),
          id: '550e8400-e29b-41d4-a716-446655440000',
          flag: true,
          data: { k: 1 },
        },
      },
    });
    expect(toPythonJson(received)).toBe(before);
    if (parsed.ok) {
      const count: number | undefined = parsed.value.body.count;
      const kind: 'a' | 'b' | undefined = parsed.value.body.kind;
      expect([count, kind]).toEqual([5, undefined]);
    }
  });
});

describe('schemas the engine cannot answer for are refused when the route is built', () => {
  it('refuses an int field without bounds inside 2^53', () => {
    expect(() =>
      compileRequest({ body: { type: 'object', properties: { n: { 'x-py': 'int', minimum: 0 } } } }),
    ).toThrow(/bound/);
  });

  it('refuses a keyword without a pydantic error', () => {
    const schema = { type: 'object', properties: { s: { 'x-py': 'str', format: 'email' } } } as unknown as ModelSchema;
    expect(() => compileRequest({ body: schema })).toThrow(/format/);
  });

  it('refuses a nullable enum that does not list null', () => {
    expect(() =>
      compileRequest({
        body: { type: 'object', properties: { e: { 'x-py': 'enum', enum: ['A'], 'x-py-nullable': true } } },
      }),
    ).toThrow(/null/);
  });
});
