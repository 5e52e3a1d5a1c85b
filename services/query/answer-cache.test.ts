import { afterEach, describe, expect, it } from 'vitest';
import {
  MemoryAnnouncements,
  type StoredAnnouncement,
  type StoredAnnouncements,
} from '../shared/redis/stored-announcements.ts';
import { AnswerCache, type AnswerCacheOptions } from './answer-cache.ts';
import { currentSignal, withSignal } from '../shared/abortable.ts';

/** An announcement source whose subscription can be down, as a Redis one's can. */
class FakeAnnouncements extends MemoryAnnouncements implements StoredAnnouncements {
  up = true;
  override listening(): boolean {
    return this.up;
  }
  stored(...tenants: string[]): void {
    void this.publish({ tenants, sessions: [] } satisfies StoredAnnouncement);
  }
  agentStored(agent: string): void {
    void this.publish({ tenants: [], sessions: [], agents: [agent] });
  }
  lose(): void {
    this.up = false;
    this.missed();
  }
}

/** A read that answers when told to, counting how often it ran. */
function controlledRead<T>(value: T) {
  const pending: ((value: T) => void)[] = [];
  const read = {
    count: 0,
    run: () => {
      read.count += 1;
      return new Promise<T>((resolve) => pending.push(resolve));
    },
    finish: () => pending.splice(0).forEach((resolve) => resolve(value)),
  };
  return read;
}

const clock = { ms: 0, now: () => clock.ms };
let caches: AnswerCache[] = [];

function makeCache(overrides: Partial<AnswerCacheOptions> = {}) {
  const announcements = new FakeAnnouncements();
  const cache = new AnswerCache(announcements, {
    maxAgeMs: 30_000,
    maxBytes: 1024 * 1024,
    agentsAnnounced: true,
    perf: clock,
    ...overrides,
  });
  caches.push(cache);
  let reads = 0;
  const answer = (tenant: string, query = 'summary', value: unknown = { tenant, read: reads + 1 }) =>
    cache.answer(tenant, query, async () => {
      reads += 1;
      return value;
    });
  return { cache, announcements, answer, reads: () => reads };
}

afterEach(() => {
  caches.forEach((cache) => cache.close());
  caches = [];
});

describe('AnswerCache', () => {
  it('answers a repeated request from the first read', async () => {
    const { answer, reads } = makeCache();
    const first = await answer('acme');
    expect(await answer('acme')).toBe(first);
    expect(reads()).toBe(1);
    await answer('acme', 'timeline');
    await answer('globex');
    expect(reads()).toBe(3);
  });

  it('drops the answers of a tenant whose batch was stored, and only those', async () => {
    const { announcements, answer, reads } = makeCache();
    await answer('acme');
    await answer('acme', 'by-agent');
    await answer('globex');
    announcements.stored('acme');
    expect(await answer('acme')).toEqual({ tenant: 'acme', read: 4 });
    await answer('acme', 'by-agent');
    await answer('globex');
    expect(reads()).toBe(5);
  });

  it('drops every tenant’s answers when an agent is stored, and keeps none that read agents where agents are not announced', async () => {
    const { announcements, answer, reads } = makeCache();
    await answer('acme');
    await answer('globex');
    announcements.agentStored('agent-1');
    await answer('acme');
    await answer('globex');
    expect(reads()).toBe(4);
    const unannounced = makeCache({ agentsAnnounced: false });
    let names = 0;
    const readNames = async () => ++names;
    await unannounced.cache.answer('acme', 'agent-names', readNames, { agents: true });
    await unannounced.cache.answer('acme', 'agent-names', readNames, { agents: true });
    expect(names).toBe(2);
    // Answers of the tenant's own data are kept all the same.
    await unannounced.answer('acme');
    await unannounced.answer('acme');
    expect(unannounced.reads()).toBe(1);
  });

  it('does not keep a read that was under way when the tenant’s batch was stored, nor let later requests join it', async () => {
    const { cache, announcements } = makeCache();
    const before = controlledRead('before the batch');
    const after = controlledRead('after the batch');
    const early = cache.answer('acme', 'summary', before.run);
    announcements.stored('acme');
    const late = cache.answer('acme', 'summary', after.run);
    expect([before.count, after.count]).toEqual([1, 1]);
    before.finish();
    after.finish();
    expect(await early).toBe('before the batch');
    expect(await late).toBe('after the batch');
    // The read begun after the batch is the one kept.
    expect(await cache.answer('acme', 'summary', async () => 'read again')).toBe('after the batch');
  });

  it('shares one read among the requests that ask the same while it runs', async () => {
    const { cache } = makeCache();
    const read = controlledRead({ total_cost: '1.5' });
    const answers = Array.from({ length: 32 }, () => cache.answer('acme', 'summary', read.run));
    read.finish();
    const values = await Promise.all(answers);
    expect(read.count).toBe(1);
    expect(new Set(values).size).toBe(1);
  });

  it('keeps nothing and shares nothing while announcements could be missed, and drops all when they may have been', async () => {
    const { announcements, answer, reads } = makeCache();
    await answer('acme');
    await answer('globex');
    announcements.lose();
    await answer('acme');
    await answer('acme');
    expect(reads()).toBe(4);
    announcements.up = true;
    await answer('globex');
    await answer('globex');
    expect(reads()).toBe(5);
  });

  it('reads again once an answer is older than the maximum age', async () => {
    const { answer, reads } = makeCache({ maxAgeMs: 1000 });
    clock.ms = 10_000;
    await answer('acme');
    clock.ms = 10_999;
    await answer('acme');
    expect(reads()).toBe(1);
    clock.ms = 11_001;
    await answer('acme');
    expect(reads()).toBe(2);
  });

  it('keeps no failed read', async () => {
    const { cache } = makeCache();
    const failing = () => Promise.reject(new Error('clickhouse unavailable'));
    await expect(cache.answer('acme', 'summary', failing)).rejects.toThrow('clickhouse unavailable');
    expect(await cache.answer('acme', 'summary', async () => 'read again')).toBe('read again');
  });

  it('holds at most maxBytes of answers, the least recently used dropped first, and none larger than that', async () => {
    const { answer, reads } = makeCache({ maxBytes: 100 });
    const answerOf = (bytes: number) => 'x'.repeat(bytes - 2); // JSON adds the quotes
    await answer('acme', 'a', answerOf(40));
    await answer('acme', 'b', answerOf(40));
    await answer('acme', 'a', answerOf(40)); // a is now the most recent
    await answer('acme', 'c', answerOf(40)); // b goes
    expect(reads()).toBe(3);
    await answer('acme', 'a', answerOf(40));
    await answer('acme', 'b', answerOf(40));
    expect(reads()).toBe(4);
    await answer('globex', 'huge', answerOf(101));
    await answer('globex', 'huge', answerOf(101));
    expect(reads()).toBe(6);
  });

  it('freezes what it keeps, so that no request changes what the next one is answered', async () => {
    const { answer } = makeCache();
    const kept = (await answer('acme', 'timeline', [{ by_provider: { openai: '1' } }])) as {
      by_provider: Record<string, string>;
    }[];
    expect(() => kept.push({ by_provider: {} })).toThrow(TypeError);
    expect(() => (kept[0]!.by_provider.openai = '2')).toThrow(TypeError);
  });
});

describe('AnswerCache, when requests sharing a read go away', () => {
  it('keeps the read for the requests still waiting, and cancels it once every one has gone', async () => {
    const { cache } = makeCache();
    const signals: (AbortSignal | undefined)[] = [];
    const read = () => {
      signals.push(currentSignal());
      return new Promise<never>(() => {});
    };
    const first = new AbortController();
    const second = new AbortController();
    const firstAnswer = withSignal(first.signal, () => cache.answer('t', 'summary', read));
    const secondAnswer = withSignal(second.signal, () => cache.answer('t', 'summary', read));
    first.abort();
    await expect(firstAnswer).rejects.toThrow(/aborted/);
    expect([signals.length, signals[0]!.aborted]).toEqual([1, false]);
    second.abort();
    await expect(secondAnswer).rejects.toThrow(/aborted/);
    expect(signals[0]!.aborted).toBe(true);
    // A request after them all starts a read of its own rather than join the cancelled one.
    const third = controlledRead({ total: '1' });
    const thirdAnswer = cache.answer('t', 'summary', third.run);
    third.finish();
    expect(await thirdAnswer).toEqual({ total: '1' });
  });
});
