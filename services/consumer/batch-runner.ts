import type { Consumer, Kafka } from 'kafkajs';
import type { Logger } from '../shared/logger.ts';
import { exponentialDelay, retry } from '../shared/retry.ts';
import {
  runAlone,
  runGathered,
  runRounds,
  type KafkaRoundsContext,
  type ReadyBatch,
  type RoundHandler,
} from './kafka-rounds.ts';
import { OffsetPlans } from './offset-plan.ts';
import { RoundGatherer } from './round-gatherer.ts';
import { StoreWatch } from './store-watch.ts';

export interface BatchRunnerOptions {
  readonly kafka: Kafka;
  readonly groupId: string;
  readonly topics: readonly string[];
  /** Topics whose batches of one fetch are stored together, one insert per table per round. */
  readonly gathered?: readonly string[];
  /**
   * The partitions of the topics, or more: kafkajs hands that many of a fetch's batches over at once,
   * and a round gathers the batches in hand.
   */
  readonly partitions?: number;
  readonly handle: RoundHandler;
  readonly log: Logger;
  /** How long to wait before the first relaunch after kafkajs gave up (doubled each failure, at most 30 s). */
  readonly relaunchDelayMs?: number;
  /** Told each batch token once the group committed past it. */
  readonly onCommitted?: (token: string) => void;
  /** Told what is fetched, what fails to store and what is stored: the metrics and the stall of /readyz. */
  readonly watch?: StoreWatch;
  /** The inserts ClickHouse runs under these token prefixes: what a regrouped batch waits out (kafka-rounds.ts). */
  readonly runningInserts?: (prefixes: readonly string[]) => Promise<number>;
}

export interface BatchRunner {
  readonly stop: () => Promise<void>;
  /** Joined its group and not crashed since: what /readyz reports. */
  readonly isJoined: () => boolean;
  /** How many times the consumer was built again after kafkajs gave up on it. */
  readonly relaunches: () => number;
}

const MAX_RELAUNCH_DELAY_MS = 30_000;

/**
 * A member of the consumer group: each fetch's rounds run through the storing loop (plan → store →
 * commit, storing-loop.ts) as kafka-rounds.ts adapts them. The batches of a gathered topic (usage) are
 * stored together, one insert per table per round across the partitions this consumer holds: one
 * insert's fixed cost (the parts its materialized views write) is paid once per fetch instead of once
 * per partition. Other topics' batches are stored one by one. Offsets are committed only after the
 * handler stored the round; while a dependency is down the round is retried with backoff (heartbeating,
 * so the group keeps the partitions), and never skipped.
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
  gathered = [],
  partitions = 4,
  handle,
  log,
  relaunchDelayMs = 1_000,
  onCommitted,
  watch = new StoreWatch(Number.POSITIVE_INFINITY),
  runningInserts,
}: BatchRunnerOptions): Promise<BatchRunner> {
  const admin = kafka.admin();
  await admin.connect();
  const plans = new OffsetPlans(admin, groupId);
  const gatheredTopics = new Set(gathered);
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
      // A fetch is a round: up to 32 MiB (kafkajs's default is 10) makes a backlog's rounds larger, each
      // insert's fixed cost shared by more rows; 64 MiB drained no faster (bench/results/dated-runs.md).
      maxBytes: 32 * 1024 * 1024,
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
      const context: KafkaRoundsContext = {
        consumer,
        plans,
        groupId,
        handle,
        log,
        onCommitted,
        watch,
        ...(runningInserts === undefined ? {} : { runningInserts }),
      };
      const gatherer = new RoundGatherer<ReadyBatch>((batches) => runRounds(batches, context));
      await consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        // One worker per partition, so that every batch of a fetch is in hand for its round at once.
        partitionsConsumedConcurrently: partitions,
        eachBatch: (payload) =>
          gatheredTopics.has(payload.batch.topic)
            ? runGathered(payload, context, gatherer)
            : runAlone(payload, context),
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
