import type { Admin, Consumer, EachBatchPayload, KafkaMessage } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../shared/logger.ts';
import { runAlone, runGathered, runRounds, type KafkaRoundsContext, type ReadyBatch } from './kafka-rounds.ts';
import { batchToken, encodePlan, OffsetPlans, roundToken } from './offset-plan.ts';
import type { Round } from './round.ts';
import { RoundGatherer } from './round-gatherer.ts';
import { StoreWatch } from './store-watch.ts';

const log = createLogger('silent');
const TOPIC = 'usage';

/** One partition's fetched batch as kafkajs hands it to eachBatch, noting what the runner does to it. */
function fakePayload(partition: number, first: number, count: number, calls: string[], running = () => true) {
  const messages = Array.from(
    { length: count },
    (_, i) => ({ offset: String(first + i), value: Buffer.from('{}'), timestamp: String(Date.now()) }) as KafkaMessage,
  );
  return {
    batch: {
      topic: TOPIC,
      partition,
      messages,
      highWatermark: String(first + count),
      firstOffset: () => messages[0]?.offset ?? null,
      isEmpty: () => messages.length === 0,
    },
    resolveOffset: (offset: string) => void calls.push(`resolve ${partition} ${offset}`),
    heartbeat: async () => void calls.push('heartbeat'),
    isRunning: running,
    isStale: () => false,
  } as unknown as EachBatchPayload;
}

/**
 * A member's context over fakes: the group's committed offsets and plans (`committed`, by partition), a
 * consumer that notes its commits, and a handler that notes each round and fails `failing` tries.
 */
function fakeContext(committed: Record<number, { offset: string; metadata: string }> = {}, storeMs = 0) {
  const calls: string[] = [];
  const commits: { partition: number; offset: string; metadata: string | null }[][] = [];
  const rounds: Round[] = [];
  const state = { failing: 0, fetchedPlans: 0 };
  const admin = {
    fetchOffsets: async () => {
      state.fetchedPlans += 1;
      return [
        { topic: TOPIC, partitions: Object.entries(committed).map(([p, c]) => ({ partition: Number(p), ...c })) },
      ];
    },
  } as unknown as Admin;
  const consumer = {
    commitOffsets: async (entries: { partition: number; offset: string; metadata: string | null }[]) => {
      calls.push('commit');
      commits.push(entries.map(({ partition, offset, metadata }) => ({ partition, offset, metadata })));
    },
    seek: () => undefined,
  } as unknown as Consumer;
  const context: KafkaRoundsContext = {
    consumer,
    plans: new OffsetPlans(admin, 'g'),
    groupId: 'g',
    log,
    onCommitted: undefined,
    watch: new StoreWatch(Number.POSITIVE_INFINITY),
    handle: async (round) => {
      calls.push('store');
      if (storeMs > 0) await new Promise((resolve) => setTimeout(resolve, storeMs));
      if (state.failing > 0) {
        state.failing -= 1;
        throw new Error('too many parts');
      }
      rounds.push(round);
    },
  };
  const gatherer = new RoundGatherer<ReadyBatch>((batches) => runRounds(batches, context));
  const fetch = (...payloads: EachBatchPayload[]) =>
    Promise.all(payloads.map((payload) => runGathered(payload, context, gatherer)));
  return { context, calls, commits, rounds, state, fetch };
}

describe("a member's rounds of Kafka batches", () => {
  it("plans a fetch's batches as one round in one commit, stores them in one call, then commits each next offset", async () => {
    const { calls, commits, rounds, fetch } = fakeContext();
    await fetch(fakePayload(0, 10, 3, calls), fakePayload(1, 5, 2, calls));

    expect(rounds).toHaveLength(1);
    const [round] = rounds;
    expect(round!.members.map(({ partition, token, uncertain }) => [partition, token, uncertain])).toEqual([
      [0, batchToken('g', TOPIC, 0, '10', '12'), false],
      [1, batchToken('g', TOPIC, 1, '5', '6'), false],
    ]);
    const id = /round:([0-9a-f]+)$/.exec(round!.token)![1]!;
    expect(commits).toEqual([
      [
        { partition: 0, offset: '10', metadata: encodePlan('12', { id, members: 2, uncertain: false }) },
        { partition: 1, offset: '5', metadata: encodePlan('6', { id, members: 2, uncertain: false }) },
      ],
      [
        { partition: 0, offset: '13', metadata: null },
        { partition: 1, offset: '7', metadata: null },
      ],
    ]);
    expect(calls.filter((call) => call !== 'heartbeat')).toEqual([
      'commit',
      'store',
      'commit',
      'resolve 0 12',
      'resolve 1 6',
    ]);
  });

  it('heartbeats while a slow round is stored, so that the group keeps its partitions', async () => {
    const { calls, fetch } = fakeContext({}, 1_200);
    await fetch(fakePayload(0, 0, 1, calls));
    const during = calls.slice(calls.indexOf('store') + 1, calls.lastIndexOf('commit'));
    expect(during).toEqual(['heartbeat', 'heartbeat']);
  });

  it('replays a round whose members are all back under its planned token, without planning it again', async () => {
    const plan = (last: string) => encodePlan(last, { id: 'ab12', members: 2, uncertain: false });
    const { calls, commits, rounds, fetch } = fakeContext({
      0: { offset: '10', metadata: plan('11') },
      1: { offset: '5', metadata: plan('5') },
    });
    // The replay fetched more than was planned: each batch is cut at its planned last offset.
    await fetch(fakePayload(0, 10, 4, calls), fakePayload(1, 5, 3, calls));
    expect(rounds.map(({ token }) => token)).toEqual([roundToken('g', TOPIC, 'ab12')]);
    expect(rounds[0]!.members.map(({ messages }) => messages.length)).toEqual([2, 1]);
    expect(commits).toHaveLength(1);
    expect(commits[0]!.map(({ offset }) => offset)).toEqual(['12', '6']);
  });

  it('regroups a member whose round is not all here into a new round, as uncertain', async () => {
    const { calls, commits, rounds, fetch } = fakeContext({
      0: { offset: '10', metadata: encodePlan('11', { id: 'ab12', members: 2, uncertain: false }) },
    });
    await fetch(fakePayload(0, 10, 2, calls), fakePayload(1, 0, 1, calls));
    expect(rounds).toHaveLength(1);
    expect(rounds[0]!.token).not.toBe(roundToken('g', TOPIC, 'ab12'));
    expect(rounds[0]!.members.map(({ partition, uncertain }) => [partition, uncertain])).toEqual([
      [1, false],
      [0, true],
    ]);
    expect(JSON.parse(commits[0]!.find(({ partition }) => partition === 0)!.metadata!)).toMatchObject({ uncertain: 1 });
  });

  it('decides a regrouped member only once no insert of the round it was planned in is running, heartbeating meanwhile', async () => {
    const { calls, rounds, context } = fakeContext({
      0: { offset: '10', metadata: encodePlan('11', { id: 'ab12', members: 2, uncertain: false }) },
    });
    const asked: string[][] = [];
    let running = 2;
    const waiting: KafkaRoundsContext = {
      ...context,
      runningInserts: async (prefixes) => {
        asked.push([...prefixes]);
        calls.push(`running ${running}`);
        return running === 0 ? 0 : running--;
      },
    };
    const gatherer = new RoundGatherer<ReadyBatch>((batches) => runRounds(batches, waiting));
    await Promise.all([fakePayload(0, 10, 2, calls)].map((payload) => runGathered(payload, waiting, gatherer)));
    expect(asked).toEqual(Array(3).fill([`${roundToken('g', TOPIC, 'ab12')}:`]));
    expect(calls.slice(0, calls.indexOf('commit'))).toEqual([
      'running 2',
      'heartbeat',
      'running 1',
      'heartbeat',
      'running 0',
    ]);
    expect(rounds.map(({ members }) => members.map(({ uncertain }) => uncertain))).toEqual([[true]]);
  });

  it('asks nothing of ClickHouse for a round replayed whole or a fresh one', async () => {
    const plan = (last: string) => encodePlan(last, { id: 'cd34', members: 1, uncertain: false });
    const { calls, rounds, context } = fakeContext({ 0: { offset: '10', metadata: plan('11') } });
    const asked: string[][] = [];
    const waiting: KafkaRoundsContext = { ...context, runningInserts: async (prefixes) => asked.push([...prefixes]) };
    const gatherer = new RoundGatherer<ReadyBatch>((batches) => runRounds(batches, waiting));
    await Promise.all(
      [fakePayload(0, 10, 2, calls), fakePayload(1, 0, 1, calls)].map((payload) =>
        runGathered(payload, waiting, gatherer),
      ),
    );
    expect(asked).toEqual([]);
    expect(rounds).toHaveLength(2);
  });

  it('retries a round that failed to store, and gives it up uncommitted once the consumer stops, reading its plan again next time', async () => {
    const { calls, commits, state, fetch, context } = fakeContext();
    await fetch(fakePayload(0, 0, 1, calls));
    expect(commits).toHaveLength(2);
    state.failing = Number.POSITIVE_INFINITY;
    let running = true;
    const fetching = fetch(fakePayload(0, 1, 1, calls, () => running));
    await new Promise((resolve) => setTimeout(resolve, 400));
    running = false;
    await fetching;
    expect(calls.filter((call) => call === 'store').length).toBeGreaterThanOrEqual(3);
    // Planned, never committed past: its next owner (or this member, fetching it again) replays its plan.
    expect(commits).toHaveLength(3);
    expect(calls.filter((call) => call.startsWith('resolve'))).toEqual(['resolve 0 0']);
    const asked = state.fetchedPlans;
    await context.plans.planFor(TOPIC, 0, '1');
    expect(state.fetchedPlans).toBe(asked + 1);
  });

  it('stores a batch of a topic that is not gathered as a round of its own, under its batch token', async () => {
    const { calls, rounds, context } = fakeContext();
    await runAlone(fakePayload(3, 7, 2, calls), context);
    expect(rounds.map(({ token }) => token)).toEqual([batchToken('g', TOPIC, 3, '7', '8')]);
    expect(calls).toContain('resolve 3 8');
  });
});
