import type { Kafka } from 'kafkajs';
import type { DependencyCheck } from '../shared/http/health.ts';
import type { Infrastructure } from '../shared/infrastructure.ts';
import { BatchingProducer, createIdempotentProducer } from '../shared/kafka/batching-producer.ts';
import type { Shutdown } from '../shared/lifecycle.ts';
import type { Logger } from '../shared/logger.ts';
import type { LiveUsageStore } from '../shared/redis/live-usage.ts';
import type { StoredAnnouncements } from '../shared/redis/stored-announcements.ts';
import type { Registry } from 'prom-client';
import { startBatchRunner } from './batch-runner.ts';
import { StoreWatch } from './store-watch.ts';
import { plannedTokens } from './offset-plan.ts';
import { loadCatalogs } from '../domain/pricing/index.ts';
import type { TenantRateCard } from '../domain/pricing/index.ts';
import { PendingReplays } from './pending-replays.ts';
import { rebuildViews } from './rebuild-views.ts';
import { runningInserts } from '../shared/clickhouse/running-inserts.ts';
import { RedisEventClaims } from './usage/event-claims.ts';
import type { UnpricedNotices } from './usage/unpriced-notices.ts';
import { createRecordWriter, type RecordWriter } from './record-writer.ts';
import { plannedRoundReachedSources, startJournalRunner, type RoundGathering } from './journal-runner.ts';
import type { RecordJournal } from '../domain/records/index.ts';

export interface ConsumerDeps {
  readonly infra: Infrastructure;
  readonly log: Logger;
  readonly shutdown: Shutdown;
  readonly groupId: string;
  /** The process's one reader of the card and the tenants' entries, read without waiting for the journal. */
  readonly tenantRates: TenantRateCard;
  readonly redisKeyPrefix: string;
  readonly liveUsage: LiveUsageStore;
  /** Told what each stored batch touched, for the live cost streams. */
  readonly announcements: StoredAnnouncements;
  /** Where the embedded engine keeps its folder (and its crash-recovery files). */
  readonly dataDir: string;
  /** How long one batch may fail to store before /readyz says the consumer is stalled. */
  readonly stallAfterMs: number;
  /** How many members of the group this process runs (CONSUMER_MEMBERS); 1 when absent. */
  readonly members?: number;
  /** The expiry of a usage claim its round did not release (USAGE_CLAIM_TTL_SECONDS). */
  readonly claimTtlSeconds: number;
  /** The embedded mode's journal, which ingest appends to: its records are stored from here. */
  readonly journal?: RecordJournal | null;
  /** /readyz fails while the journal's disk has less free (JOURNAL_MIN_FREE_MB). */
  readonly journalMinFreeBytes?: number;
  /** How the journal's rounds gather records while the writer is busy (journal-runner.ts); absent: never. */
  readonly journalGather?: RoundGathering;
  /** Emits `usage.unpriced` for what each round stored; absent: nothing is emitted. */
  readonly unpriced?: UnpricedNotices | null;
}

export interface StartedConsumer {
  readonly writer: RecordWriter;
  /** Readiness of the Kafka consumer (none in the embedded mode). */
  readonly checks: readonly DependencyCheck[];
  /** The consumer's own metrics (lag, store failures, the oldest unstored record), served on /metrics. */
  readonly metrics: readonly Registry[];
  /** Joins the group and starts consuming; called once the process serves its health routes. */
  readonly run: () => Promise<void>;
}

/**
 * Builds the record writer and, with Kafka, the batch runner that feeds it. Without Kafka the
 * writer is returned, with the runner that stores the embedded journal when one is given.
 */
export async function startConsumer({
  infra,
  log,
  shutdown,
  groupId,
  tenantRates,
  redisKeyPrefix,
  liveUsage,
  announcements,
  dataDir,
  stallAfterMs,
  claimTtlSeconds,
  members = 1,
  journal = null,
  journalMinFreeBytes = 0,
  journalGather,
  unpriced = null,
}: ConsumerDeps): Promise<StartedConsumer> {
  const consumerLog = log.child({ component: 'consumer' });
  const card = () => tenantRates.current();
  const catalogs = loadCatalogs();
  const recovery = infra.clickhouseRecovery;
  // The writer's own reads (the stored-id lookup) never wait for the embedded journal: they are what it waits for.
  const writerDeps = {
    ch: infra.clickhouse,
    reads: infra.clickhouseIngestReads,
    log: consumerLog,
    card,
    catalogs,
    liveUsage,
    announcements,
    unpriced,
  };
  if (infra.kafka === null) {
    // After a crash, or after a clean stop that left a round planned which may have failed in a view.
    const afterRebuild =
      recovery.uncleanBefore ||
      (journal !== null && (await plannedRoundReachedSources(journal, infra.clickhouseIngestReads)));
    if (afterRebuild) await rebuildViews(infra.clickhouse, consumerLog);
    recovery.repaired();
    const writer = createRecordWriter({ ...writerDeps, claims: null, deadLetterTopic: null });
    if (journal === null) return { writer, checks: [], run: async () => undefined, metrics: [] };
    const runner = startJournalRunner({
      journal,
      writer,
      log: consumerLog,
      afterRebuild,
      ...(journalGather === undefined ? {} : { gather: journalGather }),
      // An agent's name shows in other tenants' answers (by-agent reads it by id, whoever owns it).
      onStored: async (envelopes) => {
        const agents = envelopes.filter((envelope) => envelope.kind === 'agent').map((envelope) => envelope.key);
        if (agents.length > 0) await announcements.publish({ tenants: [], sessions: [], agents });
      },
    });
    shutdown.add('journal-runner', runner.stop);
    const check = async () => {
      const refusal = await journal.refusal(journalMinFreeBytes);
      if (refusal !== null) throw new Error(refusal);
      const stalled = runner.stalled(stallAfterMs);
      if (stalled !== null) throw new Error(stalled);
    };
    return { writer, checks: [{ name: 'journal', check }], run: async () => undefined, metrics: [] };
  }
  const kafka = infra.kafka;
  const topics = [kafka.topics.sessions.name, kafka.topics.usage.name];
  // The embedded engine: after a crash, views rebuilt before anything is consumed or served, and the
  // batches the group may replay (stored before the crash, or not) handed to the writer until they
  // are committed past, across clean restarts too.
  // Only then is the broker asked for the group's plans: a clean start has nothing to recover.
  const recovering = infra.clickhouse.embedded && (recovery.uncleanBefore || PendingReplays.saved(dataDir));
  const pendingReplays = recovering
    ? await recoverEngine(kafka.client, groupId, topics, infra, dataDir, consumerLog)
    : undefined;
  if (infra.redis === null)
    throw new Error('the consumer needs REDIS_URL with KAFKA_BROKERS: usage event claims live in Redis');
  const redis = infra.redis;
  // One claim per tenant and event id (eventKey): another tenant's event of the same id is claimed apart.
  const claims = new RedisEventClaims(redis, (key) => `${redisKeyPrefix}usage-claim:${key}`, claimTtlSeconds);

  const producer = createIdempotentProducer(infra.kafka.client);
  await producer.connect();
  const deadLetters = new BatchingProducer(producer, consumerLog, {
    renew: () => createIdempotentProducer(kafka.client),
  });
  shutdown.add('dead-letter-producer', () => deadLetters.close());
  const writer = createRecordWriter({
    ...writerDeps,
    claims,
    deadLetterTopic: { producer: deadLetters, topic: kafka.topics.dlq.name },
    ...(pendingReplays === undefined ? {} : { pendingReplays }),
  });
  let joined = () => false;
  const watch = new StoreWatch(stallAfterMs);
  const checks: DependencyCheck[] = [
    {
      name: 'consumer',
      check: async () => {
        if (!joined()) throw new Error('not in its consumer group');
        const stalled = watch.stalled();
        if (stalled !== null) throw new Error(stalled);
      },
    },
  ];
  // Several members of the group in one process, each a runner of its own (its fetch loop, its rounds,
  // its plans), exactly as if they were processes: a fetch's round runs plan → store → commit one step
  // after another, and the engine inserts on its own threads, so another member's round is decoded and
  // priced meanwhile. Three drained a backlog fastest on two cores; more did not help
  // (bench/results/dated-runs.md, docs/performance.md).
  const run = async () => {
    const runners = await Promise.all(
      Array.from({ length: members }, () =>
        startBatchRunner({
          kafka: kafka.client,
          groupId,
          topics,
          // Usage is gathered into rounds across partitions; session records stay one insert per batch.
          gathered: [kafka.topics.usage.name],
          partitions: kafka.topics.sessions.partitions + kafka.topics.usage.partitions,
          handle: writer.handleRound,
          log: consumerLog,
          watch,
          runningInserts: (prefixes) => runningInserts(infra.clickhouseIngestReads, prefixes),
          ...(pendingReplays === undefined ? {} : { onCommitted: (token: string) => pendingReplays.committed(token) }),
        }),
      ),
    );
    // Stopped together: one by one, each leaving would hand its partitions to the others first.
    shutdown.add('consumer', async () => void (await Promise.all(runners.map((runner) => runner.stop()))));
    joined = () => runners.every((runner) => runner.isJoined());
  };
  return { writer, checks, run, metrics: [watch.registry] };
}

async function recoverEngine(
  kafka: Kafka,
  groupId: string,
  topics: readonly string[],
  infra: Infrastructure,
  dataDir: string,
  log: Logger,
): Promise<PendingReplays> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const planned = await plannedTokens(admin, groupId, topics);
    const rebuilt = infra.clickhouseRecovery.uncleanBefore;
    if (rebuilt) await rebuildViews(infra.clickhouse, log);
    const pending = PendingReplays.open(dataDir, { rebuilt, planned });
    // From here the replays file carries what is left to do: the marker may go on a clean stop.
    infra.clickhouseRecovery.repaired();
    if (pending.size > 0) log.warn({ batches: pending.size }, 'clickhouse_replays_pending');
    return pending;
  } finally {
    await admin.disconnect();
  }
}
