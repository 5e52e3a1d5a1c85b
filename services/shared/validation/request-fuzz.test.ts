import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { costTimelineQuery, sessionListQuery } from '../../../schemas/http/query-params.ts';
import { userIdHeaders } from '../../../schemas/http/request-params.ts';
import { sessionCreateBody } from '../../../schemas/http/session-create.ts';
import { sessionUpdateBody } from '../../../schemas/http/session-update.ts';
import { numberAssignBody, numberReleaseBody } from '../../../schemas/http/telephony-numbers.ts';
import { usageEventBatchBody, usageEventBody } from '../../../schemas/http/usage-event.ts';
import type { ValidationItem } from '../errors.ts';
import { compileRequest } from './compile-request.ts';
import { readJsonBody } from './read-json-body.ts';
import type { BodySchema } from '../../../schemas/dialect/schema-dialect.ts';
import { toPythonJson } from './to-python-json.ts';

const bodies: readonly BodySchema[] = [
  sessionCreateBody,
  sessionUpdateBody,
  numberReleaseBody,
  numberAssignBody,
  usageEventBody,
  usageEventBatchBody,
];
const routes = bodies.map((body) => ({
  body,
  check: compileRequest({ body, query: sessionListQuery, headers: userIdHeaders }),
}));
const timeline = compileRequest({ query: costTimelineQuery, headers: userIdHeaders });

const valueText = fc.oneof(
  fc.json({ maxDepth: 3 }),
  fc.constantFrom(
    'NaN',
    'Infinity',
    '-Infinity',
    '1e999999',
    '-1e-999999',
    '123456789012345678901234567890',
    '-0',
    '1.0',
    'true',
    'null',
  ),
  fc.tuple(fc.integer(), fc.integer({ min: -400, max: 400 })).map(([m, e]) => `${m}e${e}`),
  fc.string({ unit: 'binary' }).map((s) => JSON.stringify(s)),
  fc.stringMatching(/^[ +\-0-9_.eE]{0,14}$/).map((s) => JSON.stringify(s)),
  fc
    .stringMatching(/^\d{4}-\d\d-\d\d([T _]\d\d:\d\d(:\d\d(\.\d{1,8})?)?(Z|[+-]\d\d:?\d\d)?)?$/)
    .map((s) => JSON.stringify(s)),
  fc.stringMatching(/^(urn:uuid:|\{)?[0-9a-fA-F-]{0,40}\}?$/).map((s) => JSON.stringify(s)),
);

const fieldNames = [
  ...new Set(bodies.flatMap((b) => Object.keys((b.type === 'array' ? b.items : b).properties))),
  'metadata',
  'other',
];
const objectText = fc
  .array(fc.tuple(fc.constantFrom(...fieldNames), valueText), { maxLength: 16 })
  .map((pairs) => `{${pairs.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`);

const mutated = fc
  .tuple(
    objectText,
    fc.array(
      fc.tuple(fc.nat(), fc.constantFrom('', '{', '}', '[', ']', ',', ':', '"', '\\', 'x', '\u0001', 'é', '😀')),
      { maxLength: 4 },
    ),
  )
  .map(([text, edits]) =>
    edits.reduce(
      (s, [at, ch]) => s.slice(0, at % (s.length + 1)) + ch + s.slice((at % (s.length + 1)) + (ch === '' ? 1 : 0)),
      text,
    ),
  );

const bodyBytes = fc.oneof(
  objectText.map((t) => Buffer.from(t)),
  objectText.map((t) => Buffer.from(`[${t},${t}]`)),
  mutated.map((t) => Buffer.from(t)),
  fc.json().map((t) => Buffer.from(t)),
  fc.integer({ min: 0, max: 700 }).map((n) => Buffer.from('['.repeat(n) + ']'.repeat(n))),
  fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)),
);

const queries = fc.dictionary(
  fc.constantFrom('page', 'limit', 'period', 'start_date', 'x'),
  fc.oneof(fc.string(), fc.array(fc.string(), { maxLength: 3 })),
  { maxKeys: 4 },
);
const headers = fc.option(fc.record({ 'x-user-id': fc.string() }), { nil: {} });

function expectWellFormed(items: readonly ValidationItem[]): void {
  expect(items.length).toBeGreaterThan(0);
  for (const item of items) {
    expect(Object.keys(item)).toEqual(
      item.ctx === undefined ? ['type', 'loc', 'msg', 'input'] : ['type', 'loc', 'msg', 'input', 'ctx'],
    );
    expect(item.type).toMatch(/^[a-z_]+$/);
    expect(['path', 'query', 'header', 'body']).toContain(item.loc[0]);
    expect(item.msg.length).toBeGreaterThan(0);
    expect(item.input).not.toBeUndefined();
  }
  expect(() => toPythonJson({ detail: items })).not.toThrow();
}

describe('the body reader and validators never throw on any request', () => {
  it('returns a value or well-formed items for arbitrary bodies, queries and headers', () => {
    fc.assert(
      fc.property(
        fc.nat(routes.length - 1),
        bodyBytes,
        fc.constantFrom('application/json', 'text/plain', undefined),
        queries,
        headers,
        (index, raw, contentType, query, header) => {
          const read = readJsonBody({ contentType, raw });
          if (!read.ok) {
            if (read.status === 422) expectWellFormed(read.items);
            return;
          }
          const result = routes[index]!.check({ body: read.value, query, headers: header });
          if (!result.ok) expectWellFormed(result.items);
          else expect(result.value.body).toBeDefined();
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('validates any query string of the timeline', () => {
    fc.assert(
      fc.property(queries, headers, (query, header) => {
        const result = timeline({ query, headers: header });
        if (!result.ok) expectWellFormed(result.items);
        else expect(['daily', 'weekly', 'monthly']).toContain(result.value.query.period);
      }),
      { numRuns: 1000 },
    );
  });
});
