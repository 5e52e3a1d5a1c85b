import type { RouteAccess } from '../auth/access.ts';
import type { RequestSchemas } from '../validation/compile-request.ts';
import {
  defineRoute,
  type HttpMethod,
  type Route,
  type RouteDeclaration,
  type RouteDefinition,
  type RouteRequest,
} from './define-route.ts';

/** Who may call a group's routes: one access for all, or one for its reads (GET) and one for its changes. */
export type GroupAccess = RouteAccess | { readonly read: RouteAccess; readonly change: RouteAccess };

/**
 * What every route of a group shares, said once: its tags and who may call it, and optionally its
 * success status, its answer, a 401 without x-user-id, and documented answers (a route adds its own).
 */
export type RouteGroupDefaults = Partial<
  Pick<
    RouteDefinition<RequestSchemas, unknown>,
    'status' | 'response' | 'requireUserId' | 'responses' | 'readsCallerTenant'
  >
> & {
  readonly tags: readonly string[];
  readonly access: GroupAccess;
};

/** A route of a group: its declaration without what the method, the path and the group say. */
export type GroupRoute<P extends string, S extends RouteRequest, R> = Omit<
  RouteDeclaration<P, S, R>,
  'method' | 'path' | 'tags' | 'access'
>;

type Declare = <const P extends string, const S extends RouteRequest = Record<never, never>, R = unknown>(
  path: P,
  route: GroupRoute<P, S, R>,
) => Route;

/** `routes.get(path, route)`, as a router reads: each makes one `defineRoute`. */
export type RouteGroup = { readonly [M in 'get' | 'post' | 'patch' | 'delete']: Declare };

/** Routes that share their tags, who may call them and what else the group says (a route's own fields win). */
export function routeGroup({ tags, access, responses, ...shared }: RouteGroupDefaults): RouteGroup {
  const declare =
    (method: HttpMethod): Declare =>
    (path, route) =>
      defineRoute({
        method,
        path,
        tags,
        access: typeof access === 'string' ? access : method === 'GET' ? access.read : access.change,
        ...shared,
        ...route,
        ...(responses === undefined ? {} : { responses: { ...responses, ...route.responses } }),
      });
  return { get: declare('GET'), post: declare('POST'), patch: declare('PATCH'), delete: declare('DELETE') };
}
