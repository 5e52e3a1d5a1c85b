import { describe, expect, it } from 'vitest';
import { isJsonContentType, readJsonBody } from './read-json-body.ts';
import { toPythonJson } from './to-python-json.ts';

const bytes = (text: string): Buffer => Buffer.from(text, 'utf8');
const read = (raw: Uint8Array, contentType: string | undefined = 'application/json') =>
  readJsonBody({ contentType, raw });

describe('readJsonBody decides like FastAPI >= 0.132 which bodies are JSON', () => {
  it.each([
    'application/json',
    'application/json; charset=utf-8',
    'APPLICATION/JSON',
    'Application/Json ; x=1',
    'application/geo+json',
    'application/+json',
  ])('parses %s (row 14c)', (contentType) => {
    expect(isJsonContentType(contentType)).toBe(true);
  });

  it.each([
    undefined,
    '',
    'text/plain',
    'application/x-www-form-urlencoded',
    'application/not-really-json',
    'application/ json',
    'application/json/x',
    'json',
  ])('does not parse %s (rows 14 and 14b)', (contentType) => {
    expect(isJsonContentType(contentType)).toBe(false);
  });

  it('hands a non-JSON body on as its raw text (row 14)', () => {
    expect(read(bytes('{"name": "Foo"}'), 'text/plain')).toEqual({ ok: true, value: '{"name": "Foo"}' });
    expect(readJsonBody({ contentType: undefined, raw: bytes('{"name": "Foo"}') })).toEqual({
      ok: true,
      value: '{"name": "Foo"}',
    });
  });
});

describe('readJsonBody reads what json.loads(bytes) reads', () => {
  it('treats an empty body and a JSON null as no body (rows 4b, 3)', () => {
    expect(read(bytes(''))).toEqual({ ok: true, value: undefined });
    expect(read(bytes(''), 'text/plain')).toEqual({ ok: true, value: undefined });
    expect(read(bytes(' null '))).toEqual({ ok: true, value: undefined });
  });

  it('strips a UTF-8 BOM and decodes UTF-16 and UTF-32 bodies', () => {
    const expected = { ok: true, value: new Map([['a', 1n]]) };
    expect(read(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), bytes('{"a":1}')]))).toEqual(expected);
    expect(read(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('{"a":1}', 'utf16le')]))).toEqual(expected);
    expect(read(Buffer.from('{"a":1}', 'utf16le'))).toEqual(expected);
    expect(read(Buffer.from([0, 0, 0, 0x7b, 0, 0, 0, 0x7d]))).toEqual({ ok: true, value: new Map() });
  });

  it('accepts an encoded lone surrogate, as surrogatepass does', () => {
    expect(read(Buffer.from([0x22, 0xed, 0xa0, 0x80, 0x22]))).toEqual({ ok: true, value: '\ud800' });
  });

  it('answers 400 for bytes that are not UTF-8 (row 3b)', () => {
    const parseError = { ok: false, status: 400, detail: 'There was an error parsing the body' };
    expect(read(Buffer.from('{"a":"\xff"}', 'latin1'))).toEqual(parseError);
    expect(read(Buffer.from([0xc0, 0x80]))).toEqual(parseError);
    expect(read(Buffer.from([0xff, 0xfe, 0x7b]))).toEqual(parseError);
    expect(read(Buffer.from([0xff]), 'text/plain')).toEqual(parseError);
  });

  it('answers 400 where Python raises something else than JSONDecodeError', () => {
    expect(read(bytes('9'.repeat(4301)))).toMatchObject({ status: 400 });
    expect(read(bytes('['.repeat(10_000)))).toMatchObject({ status: 400 });
  });

  it('gives one json_invalid item for a JSONDecodeError (row 3)', () => {
    const result = read(bytes('{some broken json}'));
    expect(result.ok).toBe(false);
    if (!result.ok && result.status === 422) {
      expect(toPythonJson({ detail: result.items })).toBe(
        '{"detail":[{"type":"json_invalid","loc":["body",1],"msg":"JSON decode error","input":{},"ctx":{"error":"Expecting property name enclosed in double quotes"}}]}',
      );
    }
  });

  it('reports a whitespace-only JSON body as json_invalid at its length (section 3)', () => {
    expect(read(bytes('   '))).toMatchObject({
      status: 422,
      items: [{ loc: ['body', 3], ctx: { error: 'Expecting value' } }],
    });
  });
});
