import type { Consumer, EachBatchPayload, Kafka, KafkaMessage } from 'kafkajs';
import type { Logger } from '../shared/logger.ts';
import { exponentialDelay, retry } from '../shared/retry.ts';
import { batchToken, encodePlan, OffsetPlans } from './offset-plan.ts';
import { StoreWatch } from './store-watch.ts';

export interface RecordBatch {
  readonly topic: string;
  readonly partition: number;
  readonly messages: readonly KafkaMessage[];
  /** Deterministic for the same offsets: the ClickHouse insert_deduplication_token prefix. */
  readonly token: string;
}

/** Stores a batch; must be safe to repeat with the same token (inserts are deduplicated by it). */
export type BatchHandler = (batch: RecordBatch) => Promise<void>;

export interface BatchRunnerOptions {
  readonly kafka: Kafka;
  readonly groupId: string;
  readonly topics: readonly string[];
  readonly handle: BatchHandler;
  readonly log: Logger;
  /** How long to wait before the first relaunch after kafkajs gave up (doubled each failure, at most 30 s). */
  readonly relaunchDelayMs?: number;
  /** Told each batch token once the group committed past it. */
  readonly onCommitted?: (token: string) => void;
  /** Told what is fetched, what fails to store and what is stored: the metrics and the stall of /readyz. */
  readonly watch?: StoreWatch;
}

export interface BatchRunner {
  readonly stop: () => Promise<void>;
  /** Joined its group and not crashed since: what /readyz reports. */
  readonly isJoined: () => boolean;
  /** How many times the consumer was built again after kafkajs gave up on it. */
  readonly relaunches: () => number;
}

const MAX_BACKOFF_MS = 5_000;
const MAX_RELAUNCH_DELAY_MS = 30_000;

/**
 * The one consumer loop: for each fetched batch, plan → store → commit. Offsets are committed only
 * after the handler stored the batch; while a dependency is down the batch is retried with backoff
 * (heartbeating, so the group keeps the partition), and never skipped.
 *
 * kafkajs restarts its consumer after most failures, but gives up for good on some that a broker
 * restart causes (e.g. "Failed to find group coordinator" once its retries run out, wrapped as
 * non-retriable). The runner then builds a new consumer and joins again, with a growing delay, for
 * as long as it runs: a broker outage must not stop the process from storing (until it is back,
 * /readyz says the consumer is not in its group). Nothing is lost either way: offsets were committed
 * only for stored batches, and a replay keeps its planned boundaries.
 */
export async function startBatchRunner({
  kafka,
  groupId,
  topics,
  handle,
  log,
  relaunchDelayMs = 1_000,
  onCommitted,
  watch = new StoreWatch(Number.POSITIVE_INFINITY),
}: BatchRunnerOptions): Promise<BatchRunner> {
  const admin = kafka.admin();
  await admin.connect();
  const plans = new OffsetPlans(admin, groupId);
  let joined = false;
  let stopped = false;
  let relaunches = 0;
  let current: Consumer | null = null;
  let relaunching: Promise<void> = Promise.resolve();
  let wake = () => {};
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  const launch = async (): Promise<void> => {
    // A consumer killed without leaving holds its partitions until its session expires: kept short.
    const consumer = kafka.consumer({
      groupId,
      sessionTimeout: 10_000,
      heartbeatInterval: 2_000,
      maxBytesPerPartition: 4 * 1024 * 1024,
    });
    current = consumer;
    // After a rebalance this process may own partitions another member committed: ask the broker.
    consumer.on(consumer.events.GROUP_JOIN, () => {
      plans.forgetAll();
      joined = true;
    });
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      joined = false;
      log.error({ err: payload.error, restart: payload.restart }, 'consumer_crashed');
      if (!payload.restart) relaunching = relaunch(consumer);
    });
    try {
      await consumer.connect();
      for (const topic of topics) await consumer.subscribe({ topic, fromBeginning: true });
      await consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: 4,
        eachBatch: (payload) => runBatch(payload, { consumer, plans, groupId, handle, log, onCommitted, watch }),
      });
    } catch (error) {
      await consumer.disconnect().catch(() => undefined);
      throw error;
    }
  };

  const relaunch = async (crashed: Consumer): Promise<void> => {
    await crashed.disconnect().catch(() => undefined);
    // A stop wakes the pause; one asked before the pause began must not wait it out.
    const wait = async (ms: number) => {
      if (stopped) return false;
      await pause(ms);
      return !stopped;
    };
    if (!(await wait(relaunchDelayMs))) return;
    await retry(
      async (n) => {
        try {
          await launch();
          relaunches += 1;
          log.warn({ attempt: n - 1 }, 'consumer_relaunched');
          return true;
        } catch (error) {
          log.error({ err: error, attempt: n - 1 }, 'consumer_relaunch_failed');
          return null;
        }
      },
      { delayMs: exponentialDelay(2 * relaunchDelayMs, MAX_RELAUNCH_DELAY_MS), wait },
    );
  };

  await launch();
  return {
    stop: async () => {
      stopped = true;
      wake();
      await relaunching;
      await current?.disconnect();
      await admin.disconnect();
    },
    isJoined: () => joined,
    relaunches: () => relaunches,
  };
}

interface RunContext {
  readonly onCommitted: ((token: string) => void) | undefined;
  readonly watch: StoreWatch;
  readonly consumer: Consumer;
  readonly plans: OffsetPlans;
  readonly groupId: string;
  readonly handle: BatchHandler;
  readonly log: Logger;
}

async function runBatch(
  payload: EachBatchPayload,
  { consumer, plans, groupId, handle, log, onCommitted, watch }: RunContext,
): Promise<void> {
  const { batch, resolveOffset, heartbeat, isRunning, isStale } = payload;
  const { topic, partition } = batch;
  if (batch.isEmpty()) return;
  const first = batch.firstOffset()!;
  const plan = await plans.planFor(topic, partition, first);
  let messages = batch.messages;
  if (plan !== null) {
    messages = messages.filter((m) => BigInt(m.offset) <= BigInt(plan.last));
    if (messages.at(-1)?.offset !== plan.last) {
      // The replay fetched less than the planned batch: fetch again from its start.
      log.info({ topic, partition, first, planned_last: plan.last }, 'consumer_replay_refetch');
      consumer.seek({ topic, partition, offset: first });
      return;
    }
  }
  const last = messages.at(-1)!.offset;
  const token = batchToken(groupId, topic, partition, first, last);
  await consumer.commitOffsets([{ topic, partition, offset: first, metadata: encodePlan(last) }]);
  watch.fetched(topic, partition, Number(messages[0]!.timestamp), BigInt(batch.highWatermark) - BigInt(first));
  const stored = await storeWithBackoff(() => handle({ topic, partition, messages, token }), {
    heartbeat,
    isRunning,
    isStale,
    log,
    token,
    failed: () => watch.failed(topic, partition),
  });
  watch.settled(topic, partition);
  if (!stored) return;
  const next = (BigInt(last) + 1n).toString();
  await consumer.commitOffsets([{ topic, partition, offset: next, metadata: null }]);
  plans.committed(topic, partition, next);
  onCommitted?.(token);
  resolveOffset(last);
  await heartbeat();
}

interface BackoffContext {
  readonly heartbeat: () => Promise<void>;
  readonly isRunning: () => boolean;
  readonly isStale: () => boolean;
  readonly log: Logger;
  readonly token: string;
  readonly failed: () => void;
}

/** True once stored; false when the consumer stops or loses the partition first (the next owner replays). */
async function storeWithBackoff(
  store: () => Promise<void>,
  { heartbeat, isRunning, isStale, log, token, failed }: BackoffContext,
): Promise<boolean> {
  const stored = await retry(
    async (n) => {
      try {
        await store();
        return true;
      } catch (error) {
        failed();
        log.warn({ err: error, token, attempt: n - 1 }, 'consumer_batch_store_failed');
        return null;
      }
    },
    {
      delayMs: exponentialDelay(100, MAX_BACKOFF_MS),
      wait: (ms) => waitHeartbeating(ms, { heartbeat, isRunning, isStale }),
    },
  );
  return stored === true;
}

/** Waits `ms` in slices, heartbeating so that the group keeps the partition; false once the consumer stops or the partition moved. */
async function waitHeartbeating(
  ms: number,
  { heartbeat, isRunning, isStale }: Pick<BackoffContext, 'heartbeat' | 'isRunning' | 'isStale'>,
): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (!isRunning() || isStale()) return false;
    await new Promise((resolve) => setTimeout(resolve, Math.min(500, until - Date.now())));
    await heartbeat().catch(() => undefined);
  }
  return isRunning() && !isStale();
}
