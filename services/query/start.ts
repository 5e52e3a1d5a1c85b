import type { Budgets } from '../domain/budgets/index.ts';
import type { RouteRegistrar } from '../shared/http/create-app.ts';
import type { Route } from '../shared/http/define-route.ts';
import { dashboardRoutes } from './dashboard/dashboard-routes.ts';
import type { Infrastructure } from '../shared/infrastructure.ts';
import type { LiveUsageStore } from '../shared/redis/live-usage.ts';
import type { Shutdown } from '../shared/lifecycle.ts';
import type { Logger } from '../shared/logger.ts';
import { loadCatalogs } from '../domain/pricing/index.ts';
import type { TenantRateCard } from '../domain/pricing/index.ts';
import { auditRoutes } from './routes/audit-routes.ts';
import { costRoutes } from './routes/cost-routes.ts';
import { liveRoutes } from './routes/live-routes.ts';
import { LiveStreams } from './live/live-streams.ts';
import type { StoredAnnouncements } from '../shared/redis/stored-announcements.ts';
import { AnswerCache, READ_AFRESH } from './answer-cache.ts';
import type { Config } from '../shared/config.ts';
import { rateReadRoutes } from './routes/rate-routes.ts';
import { abortableReads } from '../shared/clickhouse/abortable-reads.ts';
import { queryMetrics } from './query-metrics.ts';
import type { Registry } from 'prom-client';
import { unpricedRoutes } from './routes/unpriced-routes.ts';
import { exportRoutes } from './routes/export-routes.ts';
import { statementRoutes } from './routes/statement-routes.ts';
import { loadAsOfSources } from './as-of.ts';
import { scheduleExports } from './scheduled-export.ts';

export interface QueryDeps {
  readonly infra: Infrastructure;
  readonly liveUsage: LiveUsageStore;
  /** What the consumer stored, to wake the live streams. */
  readonly announcements: StoredAnnouncements;
  readonly log: Logger;
  readonly shutdown: Shutdown;
  readonly config: Pick<Config, 'liveStreams' | 'auth' | 'queryCache' | 'usageExport'>;
  /** The process's one reader of the card and the tenants' entries: quotes price as the consumer does. */
  readonly tenantRates: TenantRateCard;
  /** The process's one copy of the budgets: a call's cost stream and cost card measure it against its caps. */
  readonly budgets: Pick<Budgets, 'all'>;
  /** Whether a request's read waits for the embedded journal's writer now; absent without the journal. */
  readonly writerAwaited?: () => boolean;
}

/** The cost routes over ClickHouse (and the live usage of calls in progress), and the prices in force. */
export async function startQuery({
  infra,
  liveUsage,
  announcements,
  log,
  shutdown,
  config,
  tenantRates,
  budgets,
  writerAwaited = () => false,
}: QueryDeps): Promise<{ routes: Route[]; pages: RouteRegistrar[]; metrics: Registry }> {
  // The streams' reads yield to the requests' reads that wait for the writer or use the embedded
  // engine's read connections (a ClickHouse server has cores of its own: no queue to watch).
  const queue = infra.clickhouseReads.queue;
  const requestsReading = () => writerAwaited() || (queue !== undefined && queue.running + queue.waiting > 0);
  // Ended when shutdown begins (shutdown.signal), so that the HTTP server can drain its connections.
  const streams = new LiveStreams(announcements, config.liveStreams, shutdown.signal, requestsReading);
  shutdown.add('live-streams', () => streams.close());
  const cache = answerCacheOf(infra, announcements, config.queryCache, log);
  if (cache !== null) shutdown.add('answer-cache', async () => cache.close());
  const answers = cache ?? READ_AFRESH;
  // The routes' reads are cancelled with their request when its client goes away; the refreshers' are not.
  const reads = abortableReads(infra.clickhouseReads);
  if (config.usageExport !== null) {
    const exports = scheduleExports(infra.clickhouseReads, config.usageExport, log);
    shutdown.add('usage-export', () => exports.stop());
  }
  // The views' own SELECTs, which an as-of read runs over the rows stored by then.
  const asOfSources = await loadAsOfSources(infra.clickhouseReads);
  const routes = [
    ...costRoutes({ ch: reads, asOfSources, liveUsage, answers, budgets }),
    ...liveRoutes({ ch: reads, liveUsage, streams, budgets }),
    ...unpricedRoutes(reads),
    ...exportRoutes(reads),
    ...statementRoutes(reads, asOfSources),
    ...rateReadRoutes({ card: () => tenantRates.current(), catalogs: loadCatalogs() }),
    ...auditRoutes(reads),
  ];
  // The dashboard page and its files (no credential: the page asks for one before it reads the API).
  return { routes, pages: [dashboardRoutes(config.auth.mode)], metrics: queryMetrics(streams, reads) };
}

/**
 * The answer cache, where this process hears of every stored batch: in the single-process default (no
 * Kafka and the embedded engine, which no other process writes) or through Redis, where every consumer
 * announces. Not on a cluster, whose replica answering a read may not have the batch announced yet.
 */
function answerCacheOf(
  infra: Infrastructure,
  announcements: StoredAnnouncements,
  options: Config['queryCache'],
  log: Logger,
): AnswerCache | null {
  const off = (reason: string) => (log.info({ reason }, 'answer_cache_off'), null);
  if (options === null) return off('QUERY_CACHE_SECONDS=0');
  if (infra.clickhouseReads.cluster !== null) return off('a replica may answer from before an announced batch');
  if (infra.redis === null && (infra.kafka !== null || !infra.clickhouseReads.embedded))
    return off('without REDIS_URL, batches that other processes store are not announced here');
  // Without Kafka every agent is stored by this process's writer, which announces it (services/main.ts).
  return new AnswerCache(announcements, { ...options, agentsAnnounced: infra.kafka === null });
}
