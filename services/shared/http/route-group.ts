import type { RouteAccess } from '../auth/access.ts';
import type { RequestSchemas } from '../validation/compile-request.ts';
import {
  defineRoute,
  type HttpMethod,
  type Route,
  type RouteDefinition,
  type RouteRequest,
  type TypedRouteDeclaration,
} from './define-route.ts';
import type { AnswerOf, ResponseSchema } from './route-answer.ts';

/** Who may call a group's routes: one access for all, or one for its reads (GET) and one for its changes. */
export type GroupAccess = RouteAccess | { readonly read: RouteAccess; readonly change: RouteAccess };

/**
 * What every route of a group shares, said once: its tags and who may call it, and optionally its
 * success status, its answer, a 401 without x-user-id, and documented answers (a route adds its own).
 */
export type RouteGroupDefaults<RS extends ResponseSchema | undefined = undefined> = Partial<
  Pick<RouteDefinition<RequestSchemas, unknown>, 'status' | 'requireUserId' | 'responses' | 'readsCallerTenant'>
> & {
  readonly tags: readonly string[];
  readonly access: GroupAccess;
  readonly response?: RS;
};

/** A route of a group: its declaration without what the method, the path and the group say. */
export type GroupRoute<P extends string, S extends RouteRequest, RS extends ResponseSchema | undefined, R> = Omit<
  TypedRouteDeclaration<P, S, RS, R>,
  'method' | 'path' | 'tags' | 'access'
>;

/** Declares one route of the group; its answer is the group's unless it declares its own. */
type Declare<GroupResponse extends ResponseSchema | undefined> = <
  const P extends string,
  const S extends RouteRequest = Record<never, never>,
  const RS extends ResponseSchema | undefined = GroupResponse,
  const R extends AnswerOf<RS> = AnswerOf<RS>,
>(
  path: P,
  route: GroupRoute<P, S, RS, R>,
) => Route;

/** `routes.get(path, route)`, as a router reads: each makes one `defineRoute`. */
export type RouteGroup<RS extends ResponseSchema | undefined = undefined> = {
  readonly [M in 'get' | 'post' | 'patch' | 'delete']: Declare<RS>;
};

/** Routes that share their tags, who may call them and what else the group says (a route's own fields win). */
export function routeGroup<const RS extends ResponseSchema | undefined = undefined>({
  tags,
  access,
  responses,
  ...shared
}: RouteGroupDefaults<RS>): RouteGroup<RS> {
  const declare =
    (method: HttpMethod): Declare<RS> =>
    (path, route) =>
      // The route's type was checked against its schema where it was declared; here it is only merged.
      defineRoute({
        method,
        path,
        tags,
        access: typeof access === 'string' ? access : method === 'GET' ? access.read : access.change,
        ...shared,
        ...route,
        ...(responses === undefined ? {} : { responses: { ...responses, ...route.responses } }),
      } as TypedRouteDeclaration<string, RouteRequest, ResponseSchema | undefined, never>);
  return { get: declare('GET'), post: declare('POST'), patch: declare('PATCH'), delete: declare('DELETE') };
}
