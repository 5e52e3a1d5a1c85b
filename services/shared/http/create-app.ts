import Koa from 'koa';
import Router from '@koa/router';
import { Registry } from 'prom-client';
import { OPEN, type Authenticator } from '../auth/authenticator.ts';
import type { Logger } from '../logger.ts';
import { cors } from './cors.ts';
import { registerDocsRoutes } from './docs.ts';
import { errorMiddleware } from './error-middleware.ts';
import { fastapiRouting } from './fastapi-routing.ts';
import { registerHealthRoutes, type DependencyCheck } from './health.ts';
import { createHttpMetrics } from './metrics.ts';
import { requestContext, UNLIMITED, type RequestLimiter, type RequestState } from './request-context.ts';

/** Adds a service's routes to the app's one router; registration order decides 405 Allow headers. */
export type RouteRegistrar = (router: Router) => void;

export interface HttpAppOptions {
  readonly service: string;
  readonly log: Logger;
  readonly routes: readonly RouteRegistrar[];
  readonly checks: readonly DependencyCheck[];
  readonly corsOrigins?: readonly string[];
  /** TRUST_PROXY: the client's address (ctx.ip) is the last X-Forwarded-For entry, the one the proxy wrote. */
  readonly trustProxy?: boolean;
  /** The OpenAPI document of `routes`, served at /openapi.json and browsable at /docs. */
  readonly openapi?: Readonly<Record<string, unknown>>;
  /** Registries of the services' own metrics, served on /metrics beside the HTTP ones. */
  readonly metrics?: readonly Registry[];
  /** Who may call the /api routes (AUTH_MODE); absent: everyone (AUTH_MODE=off). */
  readonly authenticator?: Authenticator;
  /** Per-key and per-tenant rate limits (AUTH_MODE=on); absent: none. */
  readonly limit?: RequestLimiter;
  /** METRICS_TOKEN: /metrics then needs it as a bearer token. */
  readonly metricsToken?: string | null;
  /** Run before routing, after the errors' middleware (the embedded mode's read-after-write wait). */
  readonly beforeRoutes?: readonly Koa.Middleware<RequestState>[];
}

/** The one Koa app shape every process serves: request ids, metrics, error mapping, health, routes. */
export function createHttpApp({
  service,
  log,
  routes,
  checks,
  corsOrigins = [],
  trustProxy = false,
  openapi,
  metrics: serviceMetrics = [],
  authenticator = OPEN,
  limit = UNLIMITED,
  metricsToken = null,
  beforeRoutes = [],
}: HttpAppOptions): Koa<RequestState> {
  const app = new Koa<RequestState>();
  app.proxy = trustProxy;
  // The proxy appends the address it was reached from; entries before it are the client's to write.
  if (trustProxy) app.maxIpsCount = 1;
  // Errors are answered by the error middleware; Koa's own handler would only log them twice.
  app.silent = true;
  const metrics = createHttpMetrics(service);
  app.use(requestContext(log, authenticator, limit));
  app.use(metrics.middleware);
  app.use(cors(corsOrigins));
  app.use(errorMiddleware());
  for (const middleware of beforeRoutes) app.use(middleware);
  // Starlette matches paths exactly: a trailing slash and letter case both make another path.
  const router = new Router({ strict: true, sensitive: true });
  registerHealthRoutes(
    router,
    service,
    checks,
    serviceMetrics.length === 0 ? metrics.registry : Registry.merge([metrics.registry, ...serviceMetrics]),
    metricsToken,
  );
  if (openapi !== undefined) registerDocsRoutes(router, openapi);
  for (const register of routes) register(router);
  app.use(fastapiRouting(router));
  app.use(router.routes());
  return app;
}
