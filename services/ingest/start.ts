import type { Config } from '../shared/config.ts';
import type { Route } from '../shared/http/define-route.ts';
import type { Infrastructure } from '../shared/infrastructure.ts';
import { BatchingProducer, createIdempotentProducer } from '../shared/kafka/batching-producer.ts';
import type { Shutdown } from '../shared/lifecycle.ts';
import type { Logger } from '../shared/logger.ts';
import { kafkaRecordSink, type RecordSink } from '../domain/records/index.ts';
import { loadCatalogs } from '../domain/pricing/index.ts';
import type { TenantRateCard } from '../domain/pricing/index.ts';
import { createTenantRateService } from './rates/rate-service.ts';
import { MemoryRateEntryStore, RedisRateEntryStore } from './rates/rate-entry-store.ts';
import { createAgentService } from './agents/agent-service.ts';
import { createKeyService } from './keys/key-service.ts';
import type { KeyRegistry } from '../shared/auth/key-registry.ts';
import { MemoryAgentStore } from './agents/memory-agent-store.ts';
import { RedisAgentStore } from './agents/redis-agent-store.ts';
import { AgentHistory } from './agents/agent-history.ts';
import { HistoryBackedAgentStore } from './agents/history-backed-agent-store.ts';
import { HistoryBackedNumberStore } from './telephony/history-backed-number-store.ts';
import { HistoryBackedSessionStore } from './sessions/history-backed-session-store.ts';
import { NumberHistory } from './telephony/number-history.ts';
import { SessionHistory } from './sessions/session-history.ts';
import { keyRoutes } from './keys/key-routes.ts';
import { agentRoutes } from './agents/agent-routes.ts';
import { rateRoutes } from './rates/rate-routes.ts';
import { TranscriptHistory } from './transcripts/transcript-history.ts';
import { sessionRoutes } from './sessions/session-routes.ts';
import { telephonyRoutes } from './telephony/telephony-routes.ts';
import { transcriptRoutes } from './transcripts/transcript-routes.ts';
import { usageRoutes } from './usage/usage-routes.ts';
import { correctionRoutes } from './usage/correction-routes.ts';
import { MemoryCorrectionGuard, RedisCorrectionGuard } from './usage/correction-guard.ts';
import { createUsageCorrections } from './usage/usage-corrections.ts';
import { createRepricing } from './rates/reprice.ts';
import { ClosedPeriods } from './periods/closed-periods.ts';
import { createPeriodService } from './periods/period-service.ts';
import { periodRoutes } from './periods/period-routes.ts';
import { scheduleAutoClose } from './periods/auto-close.ts';
import { createSessionService } from './sessions/session-service.ts';
import { MemorySessionStore } from './sessions/memory-session-store.ts';
import { RedisSessionStore } from './sessions/redis-session-store.ts';
import { createTelephonyService } from './telephony/telephony-service.ts';
import { createTranscriptService } from './transcripts/transcript-service.ts';
import { createUsageService, identityRefreshMs } from './usage/usage-service.ts';
import { forgettingChanges, SessionIdentities } from './usage/session-identities.ts';
import { MemoryNumberStore } from './telephony/memory-number-store.ts';
import { RedisNumberStore } from './telephony/redis-number-store.ts';
import { RecordingTelephonyProvider } from './telephony/telephony-provider.ts';
import type { WebhookEndpoints } from '../domain/webhooks/index.ts';
import { createWebhookService } from './webhooks/webhook-service.ts';
import { webhookRoutes } from './webhooks/webhook-routes.ts';
import { createBudgetService } from './budgets/budget-service.ts';
import { createBudgetGate } from './budgets/budget-gate.ts';
import { budgetRoutes, sessionBudgetRoutes } from './budgets/budget-routes.ts';
import type { Budgets } from '../domain/budgets/index.ts';

export interface IngestDeps {
  readonly config: Config;
  readonly infra: Infrastructure;
  readonly log: Logger;
  readonly shutdown: Shutdown;
  /** The embedded mode's journal, which the writer stores from; required when there is no Kafka. */
  readonly journalSink: RecordSink | null;
  /** This process's copy of the API keys (the authenticator reads the same one). */
  readonly keys: KeyRegistry;
  /** The process's one reader of the card and the tenants' entries (the 201's cost is priced as the consumer prices). */
  readonly tenantRates: TenantRateCard;
  /** The process's one copy of the webhook endpoints (the delivery reads the same one). */
  readonly webhookEndpoints: WebhookEndpoints;
  /** The process's one copy of the budgets (the evaluation reads the same one). */
  readonly budgets: Budgets;
}

/** Builds the ingest routes over live state (Redis, else memory) and the record sink (Kafka, else direct). */
export async function startIngest({
  config,
  infra,
  log,
  shutdown,
  journalSink,
  keys,
  tenantRates,
  webhookEndpoints,
  budgets,
}: IngestDeps): Promise<Route[]> {
  const ingestLog = log.child({ component: 'ingest' });
  const sink = infra.kafka === null ? journalSink : await kafkaSink(infra.kafka, ingestLog, shutdown);
  if (sink === null) throw new Error('ingest needs KAFKA_BROKERS, or the consumer in the same process (embedded mode)');
  const redis =
    infra.redis === null || config.redis === null ? null : { client: infra.redis, prefix: config.redis.keyPrefix };
  const liveSessions = redis === null ? new MemorySessionStore() : new RedisSessionStore(redis.client, redis.prefix);
  const liveNumbers = redis === null ? new MemoryNumberStore() : new RedisNumberStore(redis.client, redis.prefix);
  const liveAgents = redis === null ? new MemoryAgentStore() : new RedisAgentStore(redis.client, redis.prefix);
  const sessions = new HistoryBackedSessionStore(liveSessions, new SessionHistory(infra.clickhouseIngestReads));
  // AUTH_MODE=on: a number is unique among its agent's tenant's numbers; off: among all, as the replaced service kept them.
  const tenantNumbers = config.auth.mode === 'on';
  const agentStore = new HistoryBackedAgentStore(liveAgents, new AgentHistory(infra.clickhouseIngestReads));
  const numbers = new HistoryBackedNumberStore(
    liveNumbers,
    new NumberHistory(infra.clickhouseIngestReads),
    tenantNumbers ? async (agentId) => (await agentStore.get(agentId))?.user_id ?? '' : undefined,
  );
  const agents = createAgentService({
    store: agentStore,
    tenantNumbers,
    numbers,
    sink,
    log: ingestLog,
    agentsPerTenant: config.agentCaps.agentsPerTenant,
  });
  // The default carrier adapter only records: a Twilio/Telnyx/SIP TelephonyProvider plugs in here.
  const provider = new RecordingTelephonyProvider();
  const telephony = createTelephonyService({ store: numbers, provider, sink });
  // One set of kept session identities: the session service's changes reach usage acceptance at once.
  const identities = new SessionIdentities(sessions, { refreshMs: identityRefreshMs(config.usage.graceAfterEndMs) });
  // Budgets act where money is spent: a new call of a spent blocking budget's scope is a 402.
  const gate = createBudgetGate({ budgets, reads: infra.clickhouseIngestReads });
  const sessionService = createSessionService({
    store: forgettingChanges(sessions, identities),
    sink,
    log: ingestLog,
    maxAgeMs: config.usage.maxAgeMs,
    admit: gate.admit,
  });
  // A tenant entry is checked against the card it adds to (event types, units, the bound on a price); the
  // 201 of usage carries the cost as priced at acceptance, with the tenants' entries, as the consumer prices.
  const pricing = { card: () => tenantRates.current(), catalogs: loadCatalogs() };
  const rateEntries = redis === null ? new MemoryRateEntryStore() : new RedisRateEntryStore(redis.client, redis.prefix);
  // The closed months: usage of one is refused, a repricing leaves it alone, a tenant price cannot start in it.
  const closedPeriods = new ClosedPeriods(infra.clickhouseIngestReads, ingestLog);
  const stopClosedPeriods = closedPeriods.start();
  shutdown.add('closed-periods', async () => stopClosedPeriods());
  const rateService = createTenantRateService({
    ...pricing,
    tenants: tenantRates.index,
    perTenant: config.rateEntriesPerTenant,
    entries: rateEntries,
    reads: infra.clickhouseIngestReads,
    sink,
    maxAgeMs: config.usage.maxAgeMs,
    closedPeriods,
  });
  // One correction of an event at a time, whether a void, an amend or a repricing makes it.
  const guard = redis === null ? new MemoryCorrectionGuard() : new RedisCorrectionGuard(redis.client, redis.prefix);
  const periods = createPeriodService({ closed: closedPeriods, sink, guard });
  if (config.periodAutoCloseDays !== null) {
    const stopAutoClose = scheduleAutoClose({
      days: config.periodAutoCloseDays,
      reads: infra.clickhouseIngestReads,
      periods,
      log: ingestLog,
    });
    shutdown.add('period-auto-close', async () => stopAutoClose());
  }
  const transcripts = createTranscriptService({
    sessions: sessionService,
    history: new TranscriptHistory(infra.clickhouseReads),
    sink,
    log: ingestLog,
  });
  return [
    ...agentRoutes(agents, telephony.release),
    ...telephonyRoutes(telephony, agents, { numbersPerTenant: config.agentCaps.numbersPerTenant, tenantNumbers }),
    ...sessionRoutes(sessionService, agents.names),
    ...sessionBudgetRoutes(sessionService, gate),
    ...transcriptRoutes(transcripts),
    ...usageRoutes(
      createUsageService({
        sessions,
        sink,
        ...config.usage,
        identities,
        pricing,
        closedPeriods,
      }),
    ),
    ...correctionRoutes(createUsageCorrections({ reads: infra.clickhouseIngestReads, sink, guard }), ingestLog),
    ...rateRoutes(rateService, createRepricing({ reads: infra.clickhouseIngestReads, sink, guard, ...pricing })),
    ...periodRoutes(periods),
    ...keyRoutes(createKeyService({ keys, sink, perTenant: config.auth.keysPerTenant })),
    ...budgetRoutes(createBudgetService({ budgets, sink, reads: infra.clickhouseIngestReads })),
    ...webhookRoutes(
      createWebhookService({
        endpoints: webhookEndpoints,
        sink,
        outbox: infra.clickhouseIngestReads,
        allowPrivate: config.webhooks.allowPrivate,
      }),
    ),
  ];
}

async function kafkaSink(
  kafka: NonNullable<Infrastructure['kafka']>,
  log: Logger,
  shutdown: Shutdown,
): Promise<RecordSink> {
  const producer = createIdempotentProducer(kafka.client);
  await producer.connect();
  const batching = new BatchingProducer(producer, log, { renew: () => createIdempotentProducer(kafka.client) });
  shutdown.add('ingest-producer', () => batching.close());
  return kafkaRecordSink(batching, kafka.topics);
}
