import { OPEN, credentialAuthenticator, type Authenticator } from './shared/auth/authenticator.ts';
import { KeyRegistry } from './shared/auth/key-registry.ts';
import { FailedAuthLimiter, limitRequest, MemoryTokenBuckets, RedisTokenBuckets } from './shared/auth/rate-limits.ts';
import type { RequestLimiter } from './shared/http/request-context.ts';
import type { Infrastructure } from './shared/infrastructure.ts';
import { createTokenVerifier } from './shared/auth/user-tokens.ts';
import { loadConfig, ConfigError, type Config } from './shared/config.ts';
import { createHttpApp } from './shared/http/create-app.ts';
import { connectInfrastructure } from './shared/infrastructure.ts';
import { listen, Shutdown } from './shared/lifecycle.ts';
import { createLogger, type Logger } from './shared/logger.ts';
import { faultRoutes } from './consumer/fault-routes.ts';
import { startConsumer } from './consumer/start.ts';
import { startIngest } from './ingest/start.ts';
import { startQuery } from './query/start.ts';
import { TenantRateCard } from './domain/pricing/index.ts';
import { DEFAULT_RATE_CARD_URL, loadRateCard } from './domain/pricing/index.ts';
import type { Route } from './shared/http/define-route.ts';
import { buildOpenApi } from './shared/http/openapi.ts';
import { journalRecordSink } from './domain/records/index.ts';
import { RecordJournal } from './domain/records/index.ts';
import { fencedReads } from './shared/clickhouse/fenced-reads.ts';
import { inRequest, readAfterWrite, readTenant } from './shared/http/read-after-write.ts';
import { backlogGate } from './shared/http/backlog-gate.ts';
import path from 'node:path';
import { MemoryLiveUsage, RedisLiveUsage } from './shared/redis/live-usage.ts';
import { MemoryAnnouncements, RedisAnnouncements, tapPublished } from './shared/redis/stored-announcements.ts';
import { WebhookEndpoints } from './domain/webhooks/index.ts';
import { Budgets } from './domain/budgets/index.ts';
import { BudgetEvaluation } from './consumer/budget-evaluation.ts';
import { startWebhookDelivery } from './consumer/webhook-delivery.ts';
import { UnpricedNotices } from './consumer/usage/unpriced-notices.ts';

/** A read waits at most this long for the journal: behind a stalled writer it answers from what is stored. */
const JOURNAL_WAIT_MS = 10_000;

/** Whether everything acknowledged before the call is stored; false: the answer may not show all of it. */
async function waitForJournal(
  journal: RecordJournal,
  log: Logger,
  tenant: string | null,
  urgent: boolean,
): Promise<boolean> {
  const started = Date.now();
  const caught = await journal.caughtUp(JOURNAL_WAIT_MS, tenant, urgent);
  // Said once per wait that ran out: the reads behind it, which do not wait again, are not logged each.
  if (!caught && Date.now() - started >= JOURNAL_WAIT_MS)
    log.warn({ appended: journal.appended(), stored: journal.stored() }, 'read_before_journal_stored');
  return caught;
}

/**
 * The composition root of every deployment: `npm start` runs all three services in one process
 * with the embedded defaults; SERVICES=ingest (or any subset) runs a part of them.
 */
async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const log = createLogger(config.logLevel);
  const service = config.services.join('+');
  const shutdown = new Shutdown(log, config.shutdownTimeoutMs);
  shutdown.installSignalHandlers();

  if (config.clickhouse.url === null && config.kafka !== null && !config.services.includes('consumer')) {
    // The embedded engine is this process's own: the consumer's database, where sessions and numbers
    // are stored, is not the one read here. Said loudly, as a split deployment needs CLICKHOUSE_URL.
    log.warn(
      { services: config.services, hint: 'set CLICKHOUSE_URL to read the database the consumer writes' },
      'clickhouse_embedded_without_consumer',
    );
  }
  const infra = await connectInfrastructure(config, log, shutdown);
  // Shared by the consumer (writes) and the cost queries (read) of this process.
  const liveUsage =
    infra.redis === null ? new MemoryLiveUsage() : new RedisLiveUsage(infra.redis, config.redis?.keyPrefix ?? '');
  // The consumer says what it stored; the live cost streams of every query process listen.
  const announcements =
    infra.redis === null
      ? new MemoryAnnouncements()
      : new RedisAnnouncements(infra.redis, config.redis?.keyPrefix ?? '', log.child({ component: 'announcements' }));
  shutdown.add('announcements', () => announcements.close());
  // The embedded mode's durable log between ingest and the writer (Kafka's place): a write is answered
  // once synced there, and every other request waits until what was answered before it is stored.
  const journal =
    infra.kafka === null && config.services.includes('consumer')
      ? await RecordJournal.open(path.join(config.dataDir, 'journal'))
      : null;
  if (journal !== null) shutdown.add('journal', () => journal.close());
  // A request's wait is urgent (the writer stops gathering for it); a refresh in the background's is not.
  const caughtUp =
    journal === null ? null : (tenant: string | null, urgent = true) => waitForJournal(journal, log, tenant, urgent);
  // The reads of ingest and the cost queries wait for the journal (for the tenant their request's route
  // reads, or for every tenant); the writer's own (its stored-id lookup) cannot, it is what they wait for.
  const fencedInfra =
    caughtUp === null
      ? infra
      : {
          ...infra,
          clickhouseReads: fencedReads(infra.clickhouseReads, () => caughtUp(readTenant(), inRequest())),
          clickhouseIngestReads: fencedReads(infra.clickhouseIngestReads, () => caughtUp(readTenant(), inRequest())),
        };
  // One reader of the card and the tenants' entries for every service of this process, reading past the
  // journal's fence: the consumer prices with it, and the consumer is what the fence waits for.
  const tenantRates = TenantRateCard.over(
    await loadRateCard(config.rateCardPath ?? DEFAULT_RATE_CARD_URL),
    infra.clickhouseIngestReads,
    log.child({ component: 'tenant-rates' }),
  );
  await tenantRates.start();
  shutdown.add('tenant-rates', async () => tenantRates.stop());
  // One copy of the budgets per process: ingest's routes change them and act on them, the consumer evaluates them.
  const budgets = new Budgets(infra.clickhouseIngestReads, log.child({ component: 'budgets' }));
  // One copy of the webhook endpoints per process: ingest's routes change it, the consumer's delivery sends to it.
  const webhookEndpoints = new WebhookEndpoints(infra.clickhouseIngestReads, log.child({ component: 'webhooks' }));
  const runsConsumer = config.services.includes('consumer');
  if (config.services.includes('ingest') || runsConsumer) {
    const stopEndpoints = await webhookEndpoints.start();
    shutdown.add('webhook-endpoints', async () => stopEndpoints());
  }
  // Before the consumer, which emits from its first round on (usage.unpriced), and so stopped after it.
  const webhooks = runsConsumer
    ? startWebhookDelivery({ config, infra, endpoints: webhookEndpoints, log, shutdown })
    : null;
  const unpriced =
    webhooks === null
      ? null
      : new UnpricedNotices({
          endpoints: webhookEndpoints,
          emit: webhooks.emit,
          log: log.child({ component: 'webhooks' }),
        });
  let evaluation: BudgetEvaluation | null = null;
  let consumer: Awaited<ReturnType<typeof startConsumer>> | null = null;
  if (runsConsumer) {
    consumer = await startConsumer({
      infra,
      log,
      shutdown,
      groupId: config.kafka?.groupId ?? 'embedded',
      tenantRates,
      redisKeyPrefix: config.redis?.keyPrefix ?? '',
      liveUsage,
      // What this consumer stored is evaluated against the budgets too.
      announcements: tapPublished(announcements, (announcement) => evaluation?.touched(announcement)),
      dataDir: config.dataDir,
      stallAfterMs: config.consumerStallMs,
      members: config.consumerMembers,
      claimTtlSeconds: config.usageClaimTtlSeconds,
      journal,
      journalMinFreeBytes: config.journalMinFreeBytes,
      journalGather: config.journalGather,
      unpriced,
    });
  }
  const journalSink = journal === null ? null : journalRecordSink(journal);
  if (config.services.includes('ingest') || config.services.includes('query') || consumer !== null) {
    const stopBudgets = await budgets.start();
    shutdown.add('budgets', async () => stopBudgets());
  }
  if (webhooks !== null) {
    evaluation = new BudgetEvaluation({
      budgets,
      reads: infra.clickhouseIngestReads,
      emit: webhooks.emit,
      log: log.child({ component: 'budgets' }),
    });
    shutdown.add('budget-evaluation', evaluation.start());
  }
  const serving = config.services.includes('ingest') || config.services.includes('query');
  // Every process that serves /api routes knows the keys: to check them (AUTH_MODE=on), and ingest to manage them.
  const keys = new KeyRegistry(fencedInfra.clickhouseReads, config.auth.keyRefreshMs, log.child({ component: 'auth' }));
  if (serving) {
    await keys.start();
    shutdown.add('api-keys', async () => keys.stop());
  }
  const authenticator = authenticatorFor(config, keys, log);
  const query = config.services.includes('query')
    ? await startQuery({
        infra: fencedInfra,
        liveUsage,
        announcements,
        log,
        shutdown,
        config,
        tenantRates,
        budgets,
        ...(journal === null ? {} : { writerAwaited: () => journal.awaited() }),
      })
    : null;
  const routes: Route[] = [
    ...(config.services.includes('ingest')
      ? await startIngest({
          config,
          infra: fencedInfra,
          log,
          shutdown,
          journalSink,
          keys,
          tenantRates,
          webhookEndpoints,
          budgets,
        })
      : []),
    ...(query?.routes ?? []),
    ...(consumer !== null && config.faultInjection
      ? await faultRoutes(infra.clickhouse, log, journal, webhooks?.emit ?? null)
      : []),
  ];

  const app = createHttpApp({
    service,
    log,
    routes: [...routes.map((route) => route.register), ...(query?.pages ?? [])],
    checks: [...infra.checks, ...(consumer?.checks ?? [])],
    metrics: [
      ...(consumer?.metrics ?? []),
      ...(query === null ? [] : [query.metrics]),
      ...(webhooks === null ? [] : [webhooks.metrics]),
      ...(evaluation === null ? [] : [evaluation.metrics]),
    ],
    corsOrigins: config.corsOrigins,
    trustProxy: config.trustProxy,
    openapi: buildOpenApi(routes, 'callmeter', '0.1.0', { credentials: config.auth.mode === 'on' }),
    authenticator,
    limit: limiterFor(config, infra),
    metricsToken: config.auth.metricsToken,
    beforeRoutes: [
      ...(journalSink === null ? [] : [backlogGate(journalSink.full)]),
      ...(caughtUp === null ? [] : [readAfterWrite(caughtUp)]),
    ],
  });
  const http = await listen(app, config.port, config.host);
  shutdown.add('http', http.close);
  // Joining the group can take a session timeout after a crash: health is served meanwhile.
  await consumer?.run();
  log.info({ port: config.port, services: config.services, embedded: describeMode(config) }, 'callmeter_started');
}

function authenticatorFor(config: Config, keys: KeyRegistry, log: Logger): Authenticator {
  if (config.auth.mode === 'off') {
    if (!isLoopback(config.host)) {
      log.warn(
        { host: config.host, hint: 'set AUTH_MODE=on, or listen on 127.0.0.1' },
        'auth_off_on_network: anyone who reaches this address reads and writes every tenant',
      );
    }
    return OPEN;
  }
  const tokens = config.auth.jwt === null ? null : createTokenVerifier(config.auth.jwt);
  return credentialAuthenticator({
    adminKey: config.auth.adminKey,
    keys,
    tokens,
    log: log.child({ component: 'auth' }),
    failures: new FailedAuthLimiter(config.auth.failedAuth),
  });
}

/** Rate limits hold with AUTH_MODE=on only: off is the replaced service's behaviour, which had none. */
function limiterFor(config: Config, infra: Infrastructure): RequestLimiter | undefined {
  if (config.auth.mode === 'off') return undefined;
  const buckets =
    infra.redis === null ? new MemoryTokenBuckets() : new RedisTokenBuckets(infra.redis, config.redis?.keyPrefix ?? '');
  return (caller, tenant) => limitRequest(buckets, config.auth.rateLimits, caller.id, tenant, Date.now());
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host.startsWith('127.');
}

function describeMode(config: ReturnType<typeof loadConfig>): Record<string, boolean> {
  return { clickhouse: config.clickhouse.url === null, kafka: config.kafka === null, redis: config.redis === null };
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    process.stderr.write(`${error.message}\n`);
    process.exit(2);
  }
  createLogger('error').fatal({ err: error }, 'startup_failed');
  process.exit(1);
});
