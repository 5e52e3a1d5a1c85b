import type Router from '@koa/router';
import type { Context } from 'koa';
import { pathParams, type PathParamsSchema } from '../../../schemas/http/request-params.ts';
import { scopeAllows, type Caller, type RouteAccess } from '../auth/access.ts';
import { AppError } from '../errors.ts';
import { compileRequest, type RequestSchemas, type ValidatedRequest } from '../validation/compile-request.ts';
import type { PyValue } from '../validation/py-value.ts';
import { readRequestBody, validateRequest } from '../validation/parse-request.ts';
import { toPythonJson } from '../validation/to-python-json.ts';
import type { RouteRegistrar } from './create-app.ts';
import { DEFAULT_BODY_LIMIT, readRawBody } from './read-raw-body.ts';
import type { RequestState } from './request-context.ts';
import type { AnswerOf, ExactAnswer, ResponseSchema } from './route-answer.ts';
import { sendJson } from './send-json.ts';
import { TextBody } from './text-body.ts';
import { Readable } from 'node:stream';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

export interface ResponseDoc {
  readonly description: string;
  readonly example?: unknown;
}

/** A documented error answer: what it means, and the `{"detail": …}` body it comes with. */
export function errorDoc(description: string, detail: string): ResponseDoc {
  return { description, example: { detail } };
}

export interface RouteDefinition<S extends RequestSchemas, R> {
  readonly method: HttpMethod;
  /** FastAPI style: /api/sessions/{session_id} */
  readonly path: string;
  readonly summary: string;
  readonly tags: readonly string[];
  /** Status of a success; 200 unless said. 204 answers no body, whatever the handler returns. */
  readonly status?: number;
  readonly request: S;
  /** x-user-id must be present and non-empty; checked after validation, as the replaced service did. */
  readonly requireUserId?: boolean;
  /** The right a credential needs (AUTH_MODE=on); services/shared/auth/README.md has the table. */
  readonly access: RouteAccess;
  /**
   * Every read the handler makes is of the caller's tenant's records (or of records of no tenant):
   * behind the embedded journal it waits only for those, not for another tenant's writes.
   */
  readonly readsCallerTenant?: boolean;
  readonly bodyLimitBytes?: number;
  /**
   * The body is read (as Python reads JSON) but not validated as a whole: the handler gets it as
   * `rawBody` and validates parts of it itself (a batch whose valid items are accepted alone).
   * `request.body` then only documents it.
   */
  readonly rawBody?: boolean;
  readonly response?: ResponseSchema;
  /**
   * The answer echoes request input (Python ints as bigint, floats, NaN): write it as Python's
   * json does, like a 422 body, instead of JSON.stringify (which cannot write a bigint).
   */
  readonly pythonJson?: boolean;
  /** Documented answers other than the success and the 422 (which every route has). */
  readonly responses?: Readonly<Record<number, ResponseDoc>>;
  readonly handle: (
    input: ValidatedRequest<S> & RouteCaller & { readonly rawBody: PyValue | undefined },
    ctx: Context,
  ) => Promise<R>;
}

/** A `{name}` of a path template (FastAPI's style), a `:name` for Koa. */
const PATH_PARAM = /\{(\w+)\}/g;

/** The `{name}`s of a path template. */
type PathParamNames<P extends string> = P extends `${string}{${infer N}}${infer Rest}`
  ? N | PathParamNames<Rest>
  : never;

/** The request schemas of a path: its parameters, read off the template, then what the route declares. */
export type WithPathParams<P extends string, S extends RouteRequest> = [PathParamNames<P>] extends [never]
  ? S
  : S & { readonly path: PathParamsSchema<PathParamNames<P>> };

/** What a route's request declares besides its path, whose parameters the path template names once. */
export type RouteRequest = Omit<RequestSchemas, 'path'>;

/**
 * A route as declared: the parameters of its path come from the template; `request` holds the other
 * parts, if any; the handler answers what `response` describes (no body without one).
 */
export type RouteDeclaration<P extends string, S extends RouteRequest, RS extends ResponseSchema | undefined, R> = Omit<
  RouteDefinition<WithPathParams<P, S>, R>,
  'path' | 'request' | 'response'
> & {
  readonly path: P;
  readonly request?: S;
  readonly response?: RS;
};

/** A declaration whose handler answers only what its response schema describes: its type, and no field more. */
export type TypedRouteDeclaration<
  P extends string,
  S extends RouteRequest,
  RS extends ResponseSchema | undefined,
  R,
> = RouteDeclaration<P, S, RS, R> & ExactAnswer<R, AnswerOf<RS>>;

/** Who calls: the tenant a handler acts for, and the credential. */
export interface RouteCaller {
  /** x-user-id, or the tenant a bound credential acts for (which x-user-id, when sent, must equal). */
  readonly userId: string | null;
  /** The one tenant the credential may see (a bound key, a user token); null: any (AUTH_MODE=off, an unbound key). */
  readonly tenant: string | null;
  readonly caller: Caller;
}

export interface Route {
  readonly definition: RouteDefinition<RequestSchemas, unknown>;
  readonly register: RouteRegistrar;
}

/**
 * One route, declared once: its schemas are compiled at definition time, and every request gets
 * the FastAPI-compatible body reading, validation, errors and 401 without the handler writing any.
 */
export function defineRoute<
  const P extends string,
  const S extends RouteRequest = Record<never, never>,
  const RS extends ResponseSchema | undefined = undefined,
  const R extends AnswerOf<RS> = AnswerOf<RS>,
>(declaration: TypedRouteDeclaration<P, S, RS, R>): Route {
  const names = [...declaration.path.matchAll(PATH_PARAM)].map((match) => match[1]!);
  const definition = {
    ...declaration,
    request: { ...(names.length === 0 ? {} : { path: pathParams(names) }), ...declaration.request },
  } as RouteDefinition<RequestSchemas, unknown>;
  const { body: bodySchema, ...parameters } = definition.request;
  const validate = compileRequest(definition.rawBody ? parameters : definition.request);
  const koaPath = definition.path.replace(PATH_PARAM, ':$1');
  const handler = async (ctx: Context) => {
    const body =
      bodySchema === undefined ? undefined : await readBody(ctx, definition.bodyLimitBytes ?? DEFAULT_BODY_LIMIT);
    // FastAPI's order: the body is read (a malformed one is a 422), then security dependencies run, then validation.
    const state = ctx.state as RequestState;
    const caller = await state.authenticator.authenticate(ctx.headers, ctx.ip);
    const tenant = authorize(caller, definition.access, ctx.get('x-user-id'));
    ctx.set(await state.limit(caller, tenant ?? (ctx.get('x-user-id') || null)));
    const request = validateRequest(validate, {
      path: ctx.params as Record<string, string>,
      query: ctx.query,
      headers: ctx.headers,
      body: definition.rawBody ? undefined : body,
    });
    const userId = tenant ?? ctx.get('x-user-id');
    if (definition.requireUserId && userId === '') throw AppError.of('UNAUTHORIZED', 'User ID required');
    await state.readFence?.(definition.readsCallerTenant === true && userId !== '' ? userId : null);
    const input = {
      ...(request as ValidatedRequest<RequestSchemas>),
      userId: userId === '' ? null : userId,
      tenant,
      caller,
      rawBody: definition.rawBody ? body : undefined,
    };
    const response = await definition.handle(input, ctx);
    if (definition.status === 204) ctx.status = 204;
    else if (response instanceof TextBody) sendText(ctx, definition.status ?? 200, response);
    else sendJson(ctx, definition.status ?? 200, response, definition.pythonJson ? toPythonJson(response) : undefined);
  };
  const register: RouteRegistrar = (router: Router) => {
    router.register(koaPath, [definition.method], handler);
  };
  return { definition, register };
}

/** The credential's right to the route, and its tenant: a bound credential may name only its own in x-user-id. */
function authorize(caller: Caller, access: RouteAccess, headerUserId: string): string | null {
  if (!scopeAllows(caller.scope, access))
    throw AppError.of(
      'FORBIDDEN',
      `A ${caller.kind === 'token' ? 'user token' : `${caller.scope} key`} may not call this route (it needs ${access === 'session_read' ? 'ingest or read' : access})`,
    );
  if (caller.tenant !== null && headerUserId !== '' && headerUserId !== caller.tenant)
    throw AppError.of('FORBIDDEN', 'This credential acts for another tenant than x-user-id names');
  return caller.tenant;
}

function sendText(ctx: Context, status: number, body: TextBody): void {
  ctx.status = status;
  // One part at a time: a streamed answer (an export, an event stream) waits for its reader.
  ctx.body = typeof body.text === 'string' ? body.text : Readable.from(body.text(), { highWaterMark: 1 });
  ctx.set('Content-Type', body.contentType);
  for (const [name, value] of Object.entries(body.headers)) ctx.set(name, value);
}

async function readBody(ctx: Context, limit: number): Promise<PyValue | undefined> {
  return readRequestBody({ contentType: ctx.get('content-type') || undefined, raw: await readRawBody(ctx, limit) });
}
