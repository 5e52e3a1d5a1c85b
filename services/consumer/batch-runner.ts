import { randomBytes } from 'node:crypto';
import type { Consumer, EachBatchPayload, Kafka, KafkaMessage } from 'kafkajs';
import type { Logger } from '../shared/logger.ts';
import { exponentialDelay, retry } from '../shared/retry.ts';
import { batchToken, encodePlan, OffsetPlans, roundToken, type OffsetPlan } from './offset-plan.ts';
import { RoundGatherer } from './round-gatherer.ts';
import { StoreWatch } from './store-watch.ts';

/** One partition's batch within a round. */
export interface RoundMember {
  readonly topic: string;
  readonly partition: number;
  readonly messages: readonly KafkaMessage[];
  /** Deterministic for the same offsets: the batch's usage event claims and its dead letters carry it. */
  readonly token: string;
  /** Planned in a round that could not be replayed whole: its events may be stored already under another token. */
  readonly uncertain: boolean;
}

/**
 * What one insert per table stores: the batches of one fetch across the partitions of a gathered
 * topic (usage), or one batch of another topic.
 */
export interface Round {
  readonly members: readonly RoundMember[];
  /** The same for a replay of the same round: the ClickHouse insert_deduplication_token prefix. */
  readonly token: string;
}

/** Stores a round; must be safe to repeat with the same token (inserts are deduplicated by it). */
export type RoundHandler = (round: Round) => Promise<void>;

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
}

export interface BatchRunner {
  readonly stop: () => Promise<void>;
  /** Joined its group and not crashed since: what /readyz reports. */
  readonly isJoined: () => boolean;
  /** How many times the consumer was built again after kafkajs gave up on it. */
  readonly relaunches: () => number;
}

const MAX_BACKOFF_MS = 5_000;
/** How often a round being stored asks kafkajs to heartbeat (it sends one per heartbeatInterval at most). */
const HEARTBEAT_SLICE_MS = 500;
const MAX_RELAUNCH_DELAY_MS = 30_000;

/**
 * The one consumer loop: for each fetch, plan → store → commit. The batches of a gathered topic
 * (usage) are stored together, one insert per table per round across the partitions this consumer
 * holds: one insert's fixed cost (a new part in the table and in every table its materialized views
 * write) is paid once per fetch instead of once per partition. Other topics' batches
 * are stored one by one. Offsets are committed only after the handler stored the round; while a
 * dependency is down the round is retried with backoff (heartbeating, so the group keeps the
 * partitions), and never skipped.
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
      const context: RunContext = { consumer, plans, groupId, handle, log, onCommitted, watch };
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

interface RunContext {
  readonly onCommitted: ((token: string) => void) | undefined;
  readonly watch: StoreWatch;
  readonly consumer: Consumer;
  readonly plans: OffsetPlans;
  readonly groupId: string;
  readonly handle: RoundHandler;
  readonly log: Logger;
}

/** A fetched batch, cut at its plan, waiting for its round; `settle` tells its eachBatch whether it was stored. */
interface ReadyBatch extends RoundMember {
  readonly first: string;
  readonly last: string;
  readonly plan: OffsetPlan | null;
  readonly payload: EachBatchPayload;
  readonly settle: (stored: boolean | Error) => void;
}

/**
 * A fetched batch cut at its plan, or null when the replay fetched less than the planned batch (it is
 * fetched again from its start).
 */
async function prepare(
  payload: EachBatchPayload,
  { consumer, plans, groupId, log }: RunContext,
  settle: ReadyBatch['settle'],
): Promise<ReadyBatch | null> {
  const { batch } = payload;
  const { topic, partition } = batch;
  const first = batch.firstOffset()!;
  const plan = await plans.planFor(topic, partition, first);
  let messages = batch.messages;
  if (plan !== null) {
    messages = messages.filter((m) => BigInt(m.offset) <= BigInt(plan.last));
    if (messages.at(-1)?.offset !== plan.last) {
      log.info({ topic, partition, first, planned_last: plan.last }, 'consumer_replay_refetch');
      consumer.seek({ topic, partition, offset: first });
      return null;
    }
  }
  const last = messages.at(-1)!.offset;
  const token = batchToken(groupId, topic, partition, first, last);
  const uncertain = plan?.round?.uncertain === true;
  return { topic, partition, messages, token, uncertain, first, last, plan, payload, settle };
}

/** A batch of a topic that is not gathered: a round of its own, under its batch token (plan → store → commit). */
async function runAlone(payload: EachBatchPayload, context: RunContext): Promise<void> {
  if (payload.batch.isEmpty()) return;
  const ready = await prepare(payload, context, () => undefined);
  if (ready === null) return;
  if (await runRound([ready], { token: ready.token, planned: ready.plan !== null }, context)) await finish(ready);
}

/** A batch of a gathered topic: stored in the round of its fetch. */
async function runGathered(
  payload: EachBatchPayload,
  context: RunContext,
  gatherer: RoundGatherer<ReadyBatch>,
): Promise<void> {
  if (payload.batch.isEmpty()) return;
  gatherer.enter();
  let settle: ReadyBatch['settle'] = () => undefined;
  const settled = new Promise<boolean | Error>((resolve) => (settle = resolve));
  let ready: ReadyBatch | null = null;
  try {
    ready = await prepare(payload, context, settle);
  } finally {
    gatherer.arrive(ready);
  }
  if (ready === null) return;
  const outcome = await settled;
  if (outcome instanceof Error) throw outcome;
  if (outcome) await finish(ready);
}

async function finish({ payload, last }: ReadyBatch): Promise<void> {
  payload.resolveOffset(last);
  await payload.heartbeat();
}

/**
 * The rounds of the batches one fetch gathered. A replayed round whose members are all here is the
 * same insert again, under its planned token. A member of a round planned before whose other members
 * are not here (the group regrouped the partitions) cannot be replayed as it was, and its events may be
 * stored under that round's token: it joins the new round as uncertain, whose usage events that are
 * stored are left out. A batch planned alone before rounds existed is replayed alone, as it was.
 */
async function runRounds(batches: readonly ReadyBatch[], context: RunContext): Promise<void> {
  const replays = new Map<string, ReadyBatch[]>();
  const fresh: ReadyBatch[] = [];
  for (const batch of batches) {
    const round = batch.plan?.round;
    if (batch.plan === null) fresh.push(batch);
    else if (round === undefined) await settleRound([batch], { token: batch.token, planned: true }, context);
    else replays.set(round.id, [...(replays.get(round.id) ?? []), batch]);
  }
  for (const [id, members] of replays) {
    if (members.length === members[0]!.plan!.round!.members) {
      const token = roundToken(context.groupId, members[0]!.topic, id);
      await settleRound(members, { token, planned: true }, context);
    } else {
      context.log.warn({ round: id, here: members.length }, 'consumer_round_regrouped');
      fresh.push(...members.map((member) => ({ ...member, uncertain: true })));
    }
  }
  if (fresh.length === 0) return;
  const id = randomBytes(8).toString('hex');
  await settleRound(fresh, { token: roundToken(context.groupId, fresh[0]!.topic, id), planned: false, id }, context);
}

async function settleRound(members: readonly ReadyBatch[], how: RoundHow, context: RunContext): Promise<void> {
  try {
    const stored = await runRound(members, how, context);
    for (const member of members) member.settle(stored);
  } catch (error) {
    const failure = error instanceof Error ? error : new Error(String(error));
    for (const member of members) member.settle(failure);
  }
}

/** How a round is stored: its token, and whether its members' plans are on the broker already (a replay). */
interface RoundHow {
  readonly token: string;
  readonly planned: boolean;
  /** A new round's id, written into each member's plan; absent: each member planned alone (a batch token). */
  readonly id?: string;
}

/**
 * Plan → store → commit for one round: the members' plans are committed first (write-ahead, in the
 * commit metadata of their first offsets), then the round is stored with backoff, then every member's
 * next offset is committed. True once stored and committed; false when the consumer stops or loses a
 * member's partition first (the next owner replays it from its plan).
 */
async function runRound(
  members: readonly ReadyBatch[],
  { token, planned, id }: RoundHow,
  { consumer, plans, handle, log, onCommitted, watch }: RunContext,
): Promise<boolean> {
  if (!planned)
    await consumer.commitOffsets(
      members.map(({ topic, partition, first, last, uncertain }) => ({
        topic,
        partition,
        offset: first,
        metadata: id === undefined ? encodePlan(last) : encodePlan(last, { id, members: members.length, uncertain }),
      })),
    );
  for (const { topic, partition, messages, payload, first } of members)
    watch.fetched(
      topic,
      partition,
      Number(messages[0]!.timestamp),
      BigInt(payload.batch.highWatermark) - BigInt(first),
    );
  const { heartbeat } = members[0]!.payload;
  const stored = await storeWithBackoff(
    () =>
      handle({
        token,
        members: members.map(({ topic, partition, messages, token: t, uncertain }) => ({
          topic,
          partition,
          messages,
          token: t,
          uncertain,
        })),
      }),
    {
      heartbeat,
      isRunning: () => members.every(({ payload }) => payload.isRunning()),
      isStale: () => members.some(({ payload }) => payload.isStale()),
      log,
      token,
      failed: () => members.forEach(({ topic, partition }) => watch.failed(topic, partition)),
    },
  );
  for (const { topic, partition } of members) watch.settled(topic, partition);
  if (!stored) {
    // Fetched again, each member reads its plan from the broker: the round is replayed or regrouped.
    for (const { topic, partition } of members) plans.forget(topic, partition);
    return false;
  }
  const next = members.map(({ topic, partition, last }) => ({
    topic,
    partition,
    offset: (BigInt(last) + 1n).toString(),
  }));
  await consumer.commitOffsets(next.map((entry) => ({ ...entry, metadata: null })));
  for (const { topic, partition, offset } of next) plans.committed(topic, partition, offset);
  for (const member of members) onCommitted?.(member.token);
  return true;
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
        await whileHeartbeating(heartbeat, store);
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

/**
 * Runs one try at storing a round, heartbeating meanwhile (kafkajs heartbeats only when asked). A member
 * silent for longer than the session timeout is expelled while its insert may still land, and the next
 * owners of its partitions replay its batches regrouped, each decided before that insert is stored:
 * both inserts keep the events (the same batch token holds their claims). Heartbeating, the member stays
 * in the group, which waits for it to rejoin (up to the rebalance timeout) once its round is committed.
 */
async function whileHeartbeating<T>(heartbeat: () => Promise<void>, work: () => Promise<T>): Promise<T> {
  const timer = setInterval(() => void heartbeat().catch(() => undefined), HEARTBEAT_SLICE_MS);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}

/** Waits `ms` in slices, heartbeating so that the group keeps the partition; false once the consumer stops or the partition moved. */
async function waitHeartbeating(
  ms: number,
  { heartbeat, isRunning, isStale }: Pick<BackoffContext, 'heartbeat' | 'isRunning' | 'isStale'>,
): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (!isRunning() || isStale()) return false;
    await new Promise((resolve) => setTimeout(resolve, Math.min(HEARTBEAT_SLICE_MS, until - Date.now())));
    await heartbeat().catch(() => undefined);
  }
  return isRunning() && !isStale();
}
