import { describe, expect, it } from 'vitest';
import { AnswerChecker } from './documented-answers.ts';

const json = (schema: unknown, example?: unknown) => ({
  content: { 'application/json': { schema, ...(example === undefined ? {} : { example }) } },
});
const DOCUMENT = {
  openapi: '3.1.0',
  paths: {
    '/api/things/{id}': {
      get: {
        responses: {
          '200': json({ $ref: '#/components/schemas/Thing' }, { id: 'a', cost: '1.5' }),
          '404': json({ $ref: '#/components/schemas/ErrorDetail' }),
        },
      },
      delete: { responses: { '204': { description: 'no body' } } },
    },
    '/api/things/by-name/{name}': {
      get: { responses: { '200': json({ type: 'array' }, { wrong: true }) } },
    },
  },
  components: {
    schemas: {
      Thing: {
        type: 'object',
        title: 'Thing',
        required: ['id', 'cost'],
        properties: { id: { type: 'string' }, cost: { type: 'string', pattern: '^\\d+(\\.\\d+)?$' } },
        additionalProperties: false,
      },
      ErrorDetail: { type: 'object', required: ['detail'], properties: { detail: { type: 'string' } } },
    },
  },
};
const checker = new AnswerChecker(DOCUMENT);
const answer = (status: number, body: unknown, contentType = 'application/json') => ({
  status,
  contentType,
  text: body === undefined ? '' : JSON.stringify(body),
});

describe('the check of an answer against /openapi.json', () => {
  it('passes an answer its route documents, following references into the components', () => {
    expect(checker.problem('GET', '/api/things/t1?x=1', answer(200, { id: 't1', cost: '0.25' }))).toBeNull();
    expect(checker.problem('GET', '/api/things/t1', answer(404, { detail: 'Thing not found' }))).toBeNull();
    expect(checker.problem('DELETE', '/api/things/t1', answer(204, undefined))).toBeNull();
  });

  it('names a field the schema lacks, a wrong type and a missing field', () => {
    expect(checker.problem('GET', '/api/things/t1', answer(200, { id: 't1', cost: '1', extra: 1 }))).toContain(
      '"additionalProperty":"extra"',
    );
    expect(checker.problem('GET', '/api/things/t1', answer(200, { id: 't1', cost: 0.25 }))).toContain('/cost');
    expect(checker.problem('GET', '/api/things/t1', answer(200, { id: 't1' }))).toContain('"missingProperty":"cost"');
  });

  it('refuses a status, a media type or a body the route does not document', () => {
    expect(checker.problem('GET', '/api/things/t1', answer(500, { detail: 'x' }))).toContain(
      'answered 500, which /openapi.json does not list',
    );
    expect(checker.problem('GET', '/api/things/t1', answer(200, 'a,b', 'text/csv'))).toContain('as text/csv');
    expect(checker.problem('DELETE', '/api/things/t1', answer(204, { id: 't1' }))).toContain(
      'where the document says none',
    );
  });

  it('routes a path as the router does: the most literal template first; no route, nothing to check', () => {
    expect(checker.problem('GET', '/api/things/by-name/n', answer(200, []))).toBeNull();
    expect(checker.problem('GET', '/api/things/by-name/n', answer(200, { id: 'n', cost: '1' }))).toContain(
      'GET /api/things/by-name/{name}',
    );
    expect(checker.problem('GET', '/healthz', answer(200, { status: 'ok' }))).toBeNull();
    expect(checker.problem('PATCH', '/api/things/t1', answer(405, { detail: 'Method Not Allowed' }))).toBeNull();
  });

  it('lists the examples that their own schemas refuse', () => {
    expect(checker.exampleProblems()).toEqual([expect.stringContaining('GET /api/things/by-name/{name} 200')]);
  });
});
