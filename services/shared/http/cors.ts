import type { Middleware } from 'koa';

const ALLOWED_METHODS = 'DELETE, GET, HEAD, OPTIONS, PATCH, POST, PUT';

/**
 * CORS as the replaced service configured Starlette's CORSMiddleware for the dashboards: origins
 * from configuration, every method and header. Credentials only for a listed origin, which is
 * echoed: "*" answers "*" without credentials, since echoing any origin with credentials would let
 * every web page call the API with its visitor's cookies (Starlette echoes it; we do not).
 */
export function cors(origins: readonly string[]): Middleware {
  const anyOrigin = origins.includes('*');
  const allowed = (origin: string) => anyOrigin || origins.includes(origin);
  const allowHeaders = (origin: string): Record<string, string> =>
    anyOrigin
      ? { 'Access-Control-Allow-Origin': '*' }
      : { 'Access-Control-Allow-Origin': origin, 'Access-Control-Allow-Credentials': 'true' };
  return async (ctx, next) => {
    const origin = ctx.get('origin');
    const preflight = ctx.method === 'OPTIONS' && origin !== '' && ctx.get('access-control-request-method') !== '';
    if (preflight) {
      ctx.set('Vary', 'Origin');
      if (!allowed(origin)) {
        ctx.status = 400;
        ctx.body = 'Disallowed CORS origin';
        return;
      }
      ctx.set({
        ...allowHeaders(origin),
        'Access-Control-Allow-Methods': ALLOWED_METHODS,
        'Access-Control-Max-Age': '600',
      });
      const requested = ctx.get('access-control-request-headers');
      if (requested !== '') ctx.set('Access-Control-Allow-Headers', requested);
      ctx.status = 200;
      ctx.body = 'OK';
      return;
    }
    try {
      await next();
    } finally {
      if (origin !== '' && allowed(origin)) {
        ctx.set(allowHeaders(origin));
        ctx.vary('Origin');
      }
    }
  };
}
