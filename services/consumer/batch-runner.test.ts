import type { Kafka } from 'kafkajs';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { startBatchRunner } from './batch-runner.ts';

type Listener = (event: { payload: Record<string, unknown> }) => void;

/** The part of a kafkajs consumer the runner drives, recording what was done to it. */
class FakeConsumer {
  readonly events = { GROUP_JOIN: 'consumer.group_join', CRASH: 'consumer.crash' } as const;
  readonly listeners = new Map<string, Listener[]>();
  connected = 0;
  running = 0;
  disconnected = 0;

  constructor(private readonly failConnect: boolean) {}

  on(event: string, listener: Listener): void {
    this.listeners.set(event, [...(this.listeners.get(event) ?? []), listener]);
  }

  emit(event: string, payload: Record<string, unknown>): void {
    for (const listener of this.listeners.get(event) ?? []) listener({ payload });
  }

  async connect(): Promise<void> {
    if (this.failConnect) throw new Error('broker still down');
    this.connected += 1;
  }

  async subscribe(): Promise<void> {}

  async run(): Promise<void> {
    this.running += 1;
  }

  async disconnect(): Promise<void> {
    this.disconnected += 1;
  }
}

/** A Kafka client whose consumers are fakes; `failing` says which of them (by creation order) cannot connect. */
function fakeKafka(failing: ReadonlySet<number> = new Set()) {
  const consumers: FakeConsumer[] = [];
  const kafka = {
    admin: () => ({ connect: async () => undefined, disconnect: async () => undefined }),
    consumer: () => {
      const consumer = new FakeConsumer(failing.has(consumers.length));
      consumers.push(consumer);
      return consumer;
    },
  } as unknown as Kafka;
  return { kafka, consumers };
}

const log = pino({ level: 'silent' });
const options = { groupId: 'g', topics: ['usage'], handle: async () => undefined, log, relaunchDelayMs: 5 };
const until = async (condition: () => boolean) => {
  for (let waited = 0; !condition(); waited += 5) {
    if (waited > 2_000) throw new Error('condition never held');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

describe('the batch runner when kafkajs gives up on its consumer', () => {
  it('builds a new consumer and joins again, instead of leaving the process without one', async () => {
    const { kafka, consumers } = fakeKafka();
    const runner = await startBatchRunner({ kafka, ...options });
    consumers[0]!.emit(consumers[0]!.events.GROUP_JOIN, {});
    expect(runner.isJoined()).toBe(true);

    consumers[0]!.emit(consumers[0]!.events.CRASH, {
      error: new Error('Failed to find group coordinator'),
      restart: false,
    });
    expect(runner.isJoined()).toBe(false);
    await until(() => consumers.length === 2 && consumers[1]!.running === 1);
    expect(consumers[0]!.disconnected).toBe(1);
    expect(runner.relaunches()).toBe(1);
    expect(runner.isJoined()).toBe(false);
    consumers[1]!.emit(consumers[1]!.events.GROUP_JOIN, {});
    expect(runner.isJoined()).toBe(true);

    await runner.stop();
    expect(consumers[1]!.disconnected).toBe(1);
  });

  it('leaves a crash that kafkajs restarts itself to kafkajs', async () => {
    const { kafka, consumers } = fakeKafka();
    const runner = await startBatchRunner({ kafka, ...options });
    consumers[0]!.emit(consumers[0]!.events.CRASH, { error: new Error('The coordinator is loading'), restart: true });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(consumers).toHaveLength(1);
    expect(runner.relaunches()).toBe(0);
    await runner.stop();
  });

  it('keeps trying while the broker refuses, and stops trying once stopped', async () => {
    const { kafka, consumers } = fakeKafka(new Set([1, 2]));
    const runner = await startBatchRunner({ kafka, ...options });
    consumers[0]!.emit(consumers[0]!.events.CRASH, { error: new Error('gave up'), restart: false });
    await until(() => consumers.length === 4 && consumers[3]!.running === 1);
    expect(consumers.slice(1, 3).map((consumer) => [consumer.running, consumer.disconnected])).toEqual([
      [0, 1],
      [0, 1],
    ]);
    expect(runner.relaunches()).toBe(1);

    consumers[3]!.emit(consumers[3]!.events.CRASH, { error: new Error('gave up again'), restart: false });
    await runner.stop();
    const built = consumers.length;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(consumers).toHaveLength(built);
  });
});
