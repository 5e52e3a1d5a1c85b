import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Consumer, EachBatchPayload, KafkaMessage } from 'kafkajs';
import type { Logger } from '../shared/logger.ts';
import { batchToken, encodePlan, roundToken, type OffsetPlan, type OffsetPlans } from './offset-plan.ts';
import type { Round, RoundMember } from './round.ts';
import type { RoundGatherer } from './round-gatherer.ts';
import { runRound, type RoundSource } from './storing-loop.ts';
import type { StoreWatch } from './store-watch.ts';

/** Stores a round; must be safe to repeat with the same token (inserts are deduplicated by it). */
export type RoundHandler = (round: Round) => Promise<unknown>;

/** What a member of the group stores its fetches with. */
export interface KafkaRoundsContext {
  readonly consumer: Consumer;
  readonly plans: OffsetPlans;
  readonly groupId: string;
  readonly handle: RoundHandler;
  readonly log: Logger;
  readonly onCommitted: ((token: string) => void) | undefined;
  readonly watch: StoreWatch;
  /**
   * How many inserts ClickHouse is running under these token prefixes (shared/clickhouse/running-inserts.ts);
   * absent: a regrouped batch is decided at once.
   */
  readonly runningInserts?: (prefixes: readonly string[]) => Promise<number>;
}

/** A fetched batch, cut at its plan, waiting for its round; `settle` tells its eachBatch whether it was stored. */
export interface ReadyBatch extends RoundMember {
  readonly messages: readonly KafkaMessage[];
  readonly first: string;
  readonly last: string;
  readonly plan: OffsetPlan | null;
  readonly payload: EachBatchPayload;
  readonly settle: (stored: boolean | Error) => void;
}

/** A round of Kafka batches as the storing loop runs it. */
interface KafkaRound {
  readonly members: readonly ReadyBatch[];
  readonly token: string;
  /** Whether the members' plans are on the broker already (a replay). */
  readonly planned: boolean;
  /** A new round's id, written into each member's plan; absent: each member planned alone (a batch token). */
  readonly id?: string;
}

/**
 * A fetched batch cut at its plan, or null when the replay fetched less than the planned batch (it is
 * fetched again from its start).
 */
async function prepare(
  payload: EachBatchPayload,
  { consumer, plans, groupId, log }: KafkaRoundsContext,
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

/** A batch of a topic that is not gathered: a round of its own, under its batch token. */
export async function runAlone(payload: EachBatchPayload, context: KafkaRoundsContext): Promise<void> {
  if (payload.batch.isEmpty()) return;
  const ready = await prepare(payload, context, () => undefined);
  if (ready === null) return;
  const round = { members: [ready], token: ready.token, planned: ready.plan !== null };
  if (await runRound(round, kafkaSource(context), context.log)) await finish(ready);
}

/** A batch of a gathered topic: stored in the round of its fetch. */
export async function runGathered(
  payload: EachBatchPayload,
  context: KafkaRoundsContext,
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
export async function runRounds(batches: readonly ReadyBatch[], context: KafkaRoundsContext): Promise<void> {
  const replays = new Map<string, ReadyBatch[]>();
  const fresh: ReadyBatch[] = [];
  for (const batch of batches) {
    const round = batch.plan?.round;
    if (batch.plan === null) fresh.push(batch);
    else if (round === undefined) await settleRound({ members: [batch], token: batch.token, planned: true }, context);
    else replays.set(round.id, [...(replays.get(round.id) ?? []), batch]);
  }
  const regrouped: string[] = [];
  for (const [id, members] of replays) {
    const planned = roundToken(context.groupId, members[0]!.topic, id);
    if (members.length === members[0]!.plan!.round!.members) {
      await settleRound({ members, token: planned, planned: true }, context);
    } else {
      context.log.warn({ round: id, here: members.length }, 'consumer_round_regrouped');
      fresh.push(...members.map((member) => ({ ...member, uncertain: true })));
      regrouped.push(`${planned}:`);
    }
  }
  if (fresh.length === 0) return;
  await untilInsertsEnded(regrouped, fresh, context);
  const id = randomBytes(8).toString('hex');
  const token = roundToken(context.groupId, fresh[0]!.topic, id);
  await settleRound({ members: fresh, token, planned: false, id }, context);
}

/** How long a regrouped batch waits at most for the insert of the round it was planned in. */
const INSERT_WAIT_MS = 300_000;
const INSERT_POLL_MS = 250;

/** Whether kafkajs still runs this batch and it went stale by no seek: the member holds its partition. */
const held = ({ payload }: ReadyBatch) => payload.isRunning() && !payload.isStale();

/**
 * A regrouped batch is decided (its stored events looked up) only once no insert of the round it was
 * planned in is running. The member that planned that round may have been killed or expelled with its
 * insert sent, and a server stores an insert it has begun whether its client still waits or not: decided
 * before that insert lands, the batch would keep the events it stores too. Waits heartbeating while the
 * batches are held; past INSERT_WAIT_MS the batch is decided anyway, said as an error (an insert running
 * that long is stuck, and a partition that never moves on is worse).
 */
async function untilInsertsEnded(
  prefixes: readonly string[],
  members: readonly ReadyBatch[],
  { runningInserts, log }: KafkaRoundsContext,
): Promise<void> {
  if (prefixes.length === 0 || runningInserts === undefined) return;
  const until = Date.now() + INSERT_WAIT_MS;
  let said = false;
  while (members.every(held)) {
    // Not answered (ClickHouse down): asked again, as the round's store would fail meanwhile too.
    const running = await runningInserts(prefixes).catch(() => null);
    if (running === 0) return;
    if (Date.now() >= until) {
      log.error({ rounds: prefixes, running }, 'consumer_round_decided_beside_running_insert');
      return;
    }
    if (!said && running !== null) {
      log.warn({ rounds: prefixes, running }, 'consumer_round_waits_for_insert');
      said = true;
    }
    await sleep(INSERT_POLL_MS);
    await members[0]!.payload.heartbeat().catch(() => undefined);
  }
}

async function settleRound(round: KafkaRound, context: KafkaRoundsContext): Promise<void> {
  try {
    const stored = await runRound(round, kafkaSource(context), context.log);
    for (const member of round.members) member.settle(stored);
  } catch (error) {
    const failure = error instanceof Error ? error : new Error(String(error));
    for (const member of round.members) member.settle(failure);
  }
}

/**
 * A Kafka round's plan is its members' write-ahead plans, committed in the commit metadata of their
 * first offsets (one commit for every member); its commit, every member's next offset. The round is
 * this member's while kafkajs runs and none of its batches went stale (a seek); it heartbeats meanwhile,
 * so that the group keeps the partitions. A failed commit is thrown to kafkajs, which rejoins the group.
 */
function kafkaSource({ consumer, plans, handle, onCommitted, watch }: KafkaRoundsContext): RoundSource<KafkaRound> {
  return {
    retriesWrites: false,
    async plan({ members, planned, id }) {
      if (!planned)
        await consumer.commitOffsets(
          members.map(({ topic, partition, first, last, uncertain }) => ({
            topic,
            partition,
            offset: first,
            metadata:
              id === undefined ? encodePlan(last) : encodePlan(last, { id, members: members.length, uncertain }),
          })),
        );
      for (const { topic, partition, messages, payload, first } of members)
        watch.fetched(
          topic,
          partition,
          Number(messages[0]!.timestamp),
          BigInt(payload.batch.highWatermark) - BigInt(first),
        );
    },
    async store({ members, token }) {
      await handle({
        token,
        members: members.map(({ topic, partition, messages, token: t, uncertain }) => ({
          topic,
          partition,
          messages,
          token: t,
          uncertain,
        })),
      });
    },
    async commit({ members }) {
      const next = members.map(({ topic, partition, last }) => ({
        topic,
        partition,
        offset: (BigInt(last) + 1n).toString(),
      }));
      await consumer.commitOffsets(next.map((entry) => ({ ...entry, metadata: null })));
      for (const { topic, partition, offset } of next) plans.committed(topic, partition, offset);
      for (const member of members) onCommitted?.(member.token);
    },
    holds: ({ members }) => members.every(held),
    keepAlive: ({ members }) => members[0]!.payload.heartbeat(),
    failed: (_step, { members }) => members.forEach(({ topic, partition }) => watch.failed(topic, partition)),
    ended(step, { members }, done) {
      if (step !== 'store') return;
      for (const { topic, partition } of members) watch.settled(topic, partition);
      // Fetched again, each member reads its plan from the broker: the round is replayed or regrouped.
      if (!done) for (const { topic, partition } of members) plans.forget(topic, partition);
    },
  };
}
