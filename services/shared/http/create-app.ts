import Koa from 'koa';
import type Router from '@koa/router';
import { AppError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { errorMiddleware } from './error-middleware.ts';
import { healthRoutes, type DependencyCheck } from './health.ts';
import { createHttpMetrics } from './metrics.ts';
import { requestContext, type RequestState } from './request-context.ts';

export interface HttpAppOptions {
  readonly service: string;
  readonly log: Logger;
  readonly routers: readonly Router[];
  readonly checks: readonly DependencyCheck[];
}

/** The one Koa app shape every process serves: request ids, metrics, error mapping, health, routes. */
export function createHttpApp({ service, log, routers, checks }: HttpAppOptions): Koa<RequestState> {
  const app = new Koa<RequestState>();
  app.proxy = false;
  // Errors are answered by the error middleware; Koa's own handler would only log them twice.
  app.silent = true;
  const metrics = createHttpMetrics(service);
  app.use(requestContext(log));
  app.use(metrics.middleware);
  app.use(errorMiddleware());
  for (const router of [healthRoutes(service, checks, metrics.registry), ...routers]) {
    app.use(router.routes());
  }
  app.use(() => {
    throw AppError.of('NOT_FOUND', 'Not Found');
  });
  return app;
}
