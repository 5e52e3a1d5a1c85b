import type { Middleware } from 'koa';

const ALLOWED_METHODS = 'DELETE, GET, HEAD, OPTIONS, PATCH, POST, PUT';

/**
 * CORS as the replaced service configured Starlette's CORSMiddleware for the dashboards:
 * origins from configuration ("*" allows any), every method and header, credentials allowed.
 * With credentials the allowed origin is echoed, never "*".
 */
export function cors(origins: readonly string[]): Middleware {
  const anyOrigin = origins.includes('*');
  const allowed = (origin: string) => anyOrigin || origins.includes(origin);
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
        'Access-Control-Allow-Origin': origin,
        'Access-Control-Allow-Methods': ALLOWED_METHODS,
        'Access-Control-Allow-Credentials': 'true',
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
        ctx.set('Access-Control-Allow-Origin', origin);
        ctx.set('Access-Control-Allow-Credentials', 'true');
        ctx.vary('Origin');
      }
    }
  };
}
