import type Router from '@koa/router';
import type { RouterContext } from '@koa/router';
import type { Registry } from 'prom-client';
import { sameSecret } from '../auth/api-keys.ts';
import type { RequestState } from './request-context.ts';
import { sendJson } from './send-json.ts';

export interface DependencyCheck {
  readonly name: string;
  readonly check: () => Promise<void>;
}

const CHECK_TIMEOUT_MS = 2_000;

/** /healthz and /health say the process is up; /readyz asks every dependency; /metrics for Prometheus (with METRICS_TOKEN, only to its bearer). */
export function registerHealthRoutes(
  router: Router,
  service: string,
  checks: readonly DependencyCheck[],
  registry: Registry,
  metricsToken: string | null = null,
): void {
  const alive = (ctx: RouterContext) => sendJson(ctx, 200, { status: 'ok', service });
  router.get('/healthz', alive);
  router.get('/health', alive);
  router.get('/readyz', async (ctx) => {
    const results = await Promise.all(checks.map(runCheck));
    const down = results.filter((result) => result.error !== null);
    // The raw error (a host, a port, a driver's message) goes to the log; the answer names the dependency only.
    for (const { name, error } of down)
      (ctx.state as RequestState).log.warn({ dependency: name, error }, 'readiness_check_failed');
    const summary = Object.fromEntries(results.map((r) => [r.name, r.error === null ? 'ok' : 'unavailable']));
    if (down.length === 0) return sendJson(ctx, 200, { status: 'ready', service, checks: summary });
    sendJson(ctx, 503, { detail: `${down.map((r) => r.name).join(', ')} unavailable`, service, checks: summary });
  });
  router.get('/metrics', async (ctx) => {
    if (metricsToken !== null && !sameSecret(`Bearer ${metricsToken}`, ctx.get('authorization'))) {
      ctx.set('WWW-Authenticate', 'Bearer');
      return sendJson(ctx, 401, { detail: 'Not authenticated' });
    }
    ctx.body = await registry.metrics();
    ctx.set('Content-Type', registry.contentType);
  });
}

async function runCheck({ name, check }: DependencyCheck): Promise<{ name: string; error: string | null }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
  });
  try {
    await Promise.race([check(), timeout]);
    return { name, error: null };
  } catch (error) {
    return { name, error: error instanceof Error ? error.message : String(error) };
  } finally {
    clearTimeout(timer);
  }
}
