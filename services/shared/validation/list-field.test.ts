import { describe, expect, it } from 'vitest';
import type { ModelSchema } from '../../../schemas/dialect/schema-dialect.ts';
import { compileRequest } from './compile-request.ts';
import { jsonBody, wireResponse } from './test-support/wire-bytes.ts';

/** `list[Literal['a', 'b']]` with `min_length=1, max_length=3`; the expected bytes are pydantic 2.12's. */
const model = {
  type: 'object',
  properties: {
    kinds: { 'x-py': 'list', items: { 'x-py': 'literal', enum: ['a', 'b'] }, minItems: 1, maxItems: 3 },
  },
  required: ['kinds'],
} as const satisfies ModelSchema;

const check = compileRequest({ body: model });
const reply = (text: string) => wireResponse(check, { body: jsonBody(text) });
const detail = (item: string) => ({ status: 422, body: `{"detail":[${item}]}` });

describe('a list field', () => {
  it('passes a list of allowed items through as it came', () => {
    expect(reply('{"kinds":["b","a"]}')).toEqual({ status: 200, body: '{"kinds":["b","a"]}' });
  });

  it.each([
    [
      'list_type',
      '{"kinds":"a"}',
      '{"type":"list_type","loc":["body","kinds"],"msg":"Input should be a valid list","input":"a"}',
    ],
    [
      'literal_error at the item',
      '{"kinds":["a","c"]}',
      `{"type":"literal_error","loc":["body","kinds",1],"msg":"Input should be 'a' or 'b'","input":"c","ctx":{"expected":"'a' or 'b'"}}`,
    ],
    [
      'too_short',
      '{"kinds":[]}',
      '{"type":"too_short","loc":["body","kinds"],"msg":"List should have at least 1 item after validation, not 0","input":[],"ctx":{"field_type":"List","min_length":1,"actual_length":0}}',
    ],
    [
      'too_long',
      '{"kinds":["a","a","a","a"]}',
      '{"type":"too_long","loc":["body","kinds"],"msg":"List should have at most 3 items after validation, not 4","input":["a","a","a","a"],"ctx":{"field_type":"List","max_length":3,"actual_length":4}}',
    ],
  ])('%s comes out as pydantic says it', (_name, body, item) => {
    expect(reply(body)).toEqual(detail(item));
  });

  it('refuses items without x-py list, and x-py list without items', () => {
    expect(() => compileRequest({ body: { type: 'object', properties: { k: { 'x-py': 'list' } } } })).toThrow(
      '"items" goes with x-py list',
    );
    const stray = { type: 'object', properties: { k: { 'x-py': 'str', items: { 'x-py': 'str' } } } } as const;
    expect(() => compileRequest({ body: stray })).toThrow('"items" goes with x-py list');
  });
});
