import type { ModelSchema } from '../../../schemas/dialect/schema-dialect.ts';
import type { Route } from './define-route.ts';
import { SchemaComponents } from './openapi-components.ts';
import { bodyToJsonSchema, fieldToJsonSchema } from './openapi-schema.ts';
import { DEFAULT_BODY_LIMIT } from './read-raw-body.ts';

type Json = Record<string, unknown>;

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

/** What the document says of the process it describes. */
export interface OpenApiOptions {
  /** AUTH_MODE=on: every /api route may also answer 401, 403 and 429 for the credential. */
  readonly credentials?: boolean;
}

/** OpenAPI 3.1 of a process's routes, generated from the same schemas that validate requests and type answers. */
export function buildOpenApi(
  routes: readonly Route[],
  title: string,
  version: string,
  { credentials = false }: OpenApiOptions = {},
): Json {
  const paths: Record<string, Json> = {};
  const components = new SchemaComponents();
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
      responses: responsesOf(definition, components, credentials),
      // Needed with AUTH_MODE=on only; the scopes are callmeter's (services/shared/auth/README.md).
      security: SECURITY.map((scheme) => ({ [scheme]: [] })),
      'x-callmeter-access': definition.access,
    };
    if (request.body !== undefined) {
      const schema = bodyToJsonSchema(request.body);
      const title = request.body.type === 'object' ? request.body.title : undefined;
      if (title !== undefined) components.add(title, schema);
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
    components: { schemas: components.schemas, securitySchemes: SECURITY_SCHEMES },
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

/** The success answer: its JSON (or, for a stream, its messages) and the other media types it may come as. */
function successOf(definition: Route['definition'], components: SchemaComponents): Json {
  const success = definition.response;
  // A 204 has no body, so it documents no content (as FastAPI does).
  if (success === undefined) return { description: 'Successful Response' };
  const schema = components.refOf(success.schema);
  const example = success.example === undefined ? {} : { example: success.example };
  const content =
    success.files !== undefined
      ? // A file: OpenAPI 3.1 describes its bytes only, so the schema of one of its rows is named beside them.
        Object.fromEntries(
          success.files.map((type) => [
            type,
            {
              schema: { type: 'string', ...(type.startsWith('text/') ? {} : { format: 'binary' }) },
              'x-callmeter-row': schema,
            },
          ]),
        )
      : success.events === undefined
        ? {
            'application/json': { schema, ...example },
            ...Object.fromEntries((success.alternatives ?? []).map((type) => [type, { schema: { type: 'string' } }])),
          }
        : {
            // Server-sent events: OpenAPI 3.1 has no schema for a message, so the data of each is named here.
            'text/event-stream': {
              schema: { type: 'string' },
              'x-callmeter-events': success.events,
              'x-callmeter-data': schema,
            },
          };
  return { description: 'Successful Response', content };
}

function responsesOf(definition: Route['definition'], components: SchemaComponents, credentials: boolean): Json {
  const responses: Json = { [String(definition.status ?? 200)]: successOf(definition, components) };
  for (const [status, doc] of Object.entries(definition.responses ?? {}))
    if (Number(status) >= 400) responses[status] = errorResponse(doc.description, doc.example);
    else responses[status] = { ...(responses[status] as Json), description: doc.description };
  const also = (status: number, description: string, detail: string) => {
    const own = responses[status] as { description: string; content: unknown } | undefined;
    responses[status] =
      own === undefined
        ? errorResponse(description, { detail })
        : { ...own, description: `${own.description}; or ${description[0]!.toLowerCase()}${description.slice(1)}` };
  };
  if (definition.request.body !== undefined) {
    also(400, 'The body is not UTF-8 or nests deeper than 512 levels', 'There was an error parsing the body');
    const limit = definition.bodyLimitBytes ?? DEFAULT_BODY_LIMIT;
    also(413, 'The body is larger than the limit of the route', `Request body too large: the limit is ${limit} bytes`);
  }
  if (definition.requireUserId) also(401, 'x-user-id missing or empty', 'User ID required');
  if (credentials) {
    also(401, 'No credential, or one that is invalid, expired or revoked', 'Not authenticated');
    also(403, 'The credential may not call this route, or not for this tenant', 'This credential may not …');
    also(
      429,
      'Past the rate limit of the credential or tenant, or too many failed authentications (Retry-After)',
      'Rate limit exceeded …',
    );
  }
  responses['422'] = {
    description: 'Validation Error',
    content: { 'application/json': { schema: { $ref: '#/components/schemas/HTTPValidationError' } } },
  };
  also(
    503,
    'A store (Redis, ClickHouse, Kafka or the journal) did not answer: retry (Retry-After)',
    'Database unavailable, try again',
  );
  return responses;
}
