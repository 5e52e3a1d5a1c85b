import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { AppError } from '../errors.ts';

/**
 * Starlette's routing decisions, in front of the router: a path that matches with another method
 * is a 405 whose Allow names only the FIRST matching route's methods; HEAD is never served (the
 * same 405 JSON answer, its headers without the body, as Starlette sends it); a path that matches only with its trailing slash toggled is a 307 that keeps the
 * query; anything else is 404 {"detail":"Not Found"}.
 */
export function fastapiRouting(router: Router): Middleware {
  return async (ctx, next) => {
    const method = ctx.method === 'HEAD' ? 'HEAD_IS_NOT_SERVED' : ctx.method;
    const match = router.match(ctx.path, method);
    if (match.route) return next();
    const first = match.path[0];
    if (first !== undefined) {
      const allow = first.methods.filter((m) => m !== 'HEAD').join(', ');
      throw AppError.of('METHOD_NOT_ALLOWED', 'Method Not Allowed', { headers: { Allow: allow } });
    }
    const toggled = ctx.path.endsWith('/') ? ctx.path.slice(0, -1) : `${ctx.path}/`;
    if (toggled !== '' && router.match(toggled, method).path.length > 0) {
      // Starlette's RedirectResponse: empty body, no content type. The Location is the path alone, not
      // Starlette's absolute URL from the Host header, which a client (or a proxy's cache) chooses: a
      // hostile Host would send the redirect elsewhere. `toggled` matched a route, so it starts with
      // one slash and never reads as a protocol-relative `//host`.
      ctx.body = '';
      ctx.status = 307;
      ctx.remove('Content-Type');
      ctx.set('Location', `${toggled}${ctx.querystring === '' ? '' : `?${ctx.querystring}`}`);
      return;
    }
    throw AppError.of('NOT_FOUND', 'Not Found');
  };
}
