import type { ModelSchema } from '../validation/schema-dialect.ts';
import type { Route } from './define-route.ts';
import { bodyToJsonSchema, fieldToJsonSchema } from './openapi-schema.ts';

type Json = Record<string, unknown>;

const COMPONENTS = {
  ValidationError: {
    type: 'object',
    title: 'ValidationError',
    required: ['type', 'loc', 'msg', 'input'],
    properties: {
      type: { type: 'string' },
      loc: { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'integer' }] } },
      msg: { type: 'string' },
      input: {},
      ctx: { type: 'object' },
    },
  },
  HTTPValidationError: {
    type: 'object',
    title: 'HTTPValidationError',
    properties: { detail: { type: 'array', items: { $ref: '#/components/schemas/ValidationError' } } },
  },
  ErrorDetail: {
    type: 'object',
    title: 'ErrorDetail',
    required: ['detail'],
    properties: { detail: { type: 'string' } },
  },
};

const errorResponse = (description: string, example?: unknown) => ({
  description,
  content: {
    'application/json': {
      schema: { $ref: '#/components/schemas/ErrorDetail' },
      ...(example === undefined ? {} : { example }),
    },
  },
});

/** AUTH_MODE=on: an API key as a bearer token or in x-api-key, or a user token (a JWT) as a bearer token. */
const SECURITY_SCHEMES = {
  bearer: {
    type: 'http',
    scheme: 'bearer',
    description: 'An API key (cm_live_…) or a user token (JWT); with AUTH_MODE=off nothing is needed',
  },
  apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'An API key (cm_live_…)' },
} as const;
const SECURITY = Object.keys(SECURITY_SCHEMES);

/** OpenAPI 3.1 of a process's routes, generated from the same schemas that validate requests. */
export function buildOpenApi(routes: readonly Route[], title: string, version: string): Json {
  const paths: Record<string, Json> = {};
  const schemas: Record<string, Json> = { ...COMPONENTS };
  for (const { definition } of routes) {
    const { request } = definition;
    const parameters = [
      ...parametersOf(request.path, 'path'),
      ...parametersOf(request.query, 'query'),
      ...parametersOf(request.headers, 'header'),
      ...(definition.requireUserId
        ? [
            {
              name: 'x-user-id',
              in: 'header',
              required: true,
              schema: { type: 'string', minLength: 1 },
              description: 'The caller’s user id: its costs and sessions are the ones returned',
            },
          ]
        : []),
    ];
    const operation: Json = {
      summary: definition.summary,
      tags: [...definition.tags],
      operationId: `${definition.method.toLowerCase()}_${definition.path.replace(/[^A-Za-z0-9]+/g, '_').replace(/^_|_$/g, '')}`,
      ...(parameters.length > 0 ? { parameters } : {}),
      responses: responsesOf(definition),
      // Needed with AUTH_MODE=on only; the scopes are callmeter's (services/shared/auth/README.md).
      security: SECURITY.map((scheme) => ({ [scheme]: [] })),
      'x-callmeter-access': definition.access,
    };
    if (request.body !== undefined) {
      const schema = bodyToJsonSchema(request.body);
      const title = request.body.type === 'object' ? request.body.title : undefined;
      if (title !== undefined) schemas[title] = schema;
      operation.requestBody = {
        required: true,
        content: {
          'application/json': { schema: title === undefined ? schema : { $ref: `#/components/schemas/${title}` } },
        },
      };
    }
    paths[definition.path] = { ...(paths[definition.path] ?? {}), [definition.method.toLowerCase()]: operation };
  }
  return {
    openapi: '3.1.0',
    info: { title, version },
    paths,
    components: { schemas, securitySchemes: SECURITY_SCHEMES },
  };
}

function parametersOf(model: ModelSchema | undefined, location: 'path' | 'query' | 'header'): Json[] {
  if (model === undefined) return [];
  return Object.entries(model.properties).map(([name, field]) => ({
    name,
    in: location,
    required: location === 'path' || (model.required ?? []).includes(name),
    schema: fieldToJsonSchema(field),
  }));
}

function responsesOf(definition: Route['definition']): Json {
  const success = definition.response;
  const content = {
    'application/json': {
      schema: success?.schema ?? {},
      ...(success?.example === undefined ? {} : { example: success.example }),
    },
    ...Object.fromEntries((success?.alternatives ?? []).map((type) => [type, { schema: { type: 'string' } }])),
  };
  // A 204 has no body, so it documents no content (as FastAPI does).
  const responses: Json = {
    [String(definition.status ?? 200)]: {
      description: 'Successful Response',
      ...(definition.status === 204 ? {} : { content }),
    },
  };
  for (const [status, doc] of Object.entries(definition.responses ?? {}))
    responses[status] = errorResponse(doc.description, doc.example);
  if (definition.request.body !== undefined) {
    responses['400'] ??= errorResponse('The body is not UTF-8 or nests deeper than 512 levels', {
      detail: 'There was an error parsing the body',
    });
    responses['413'] ??= errorResponse('The body is larger than the limit of the route', {
      detail: 'Request body too large: the limit is 1048576 bytes',
    });
  }
  if (definition.requireUserId)
    responses['401'] = errorResponse('x-user-id missing or empty', { detail: 'User ID required' });
  responses['422'] = {
    description: 'Validation Error',
    content: { 'application/json': { schema: { $ref: '#/components/schemas/HTTPValidationError' } } },
  };
  return responses;
}
