import { describe, expect, it } from 'vitest';
import { createLogger } from '../shared/logger.ts';
import { runRound, type RoundSource, type RoundStep } from './storing-loop.ts';

const log = createLogger('silent');
const round = { token: 'round-1' };

/** A source that notes every call in order; `fails[step]` failed tries come before each step succeeds. */
function fakeSource({
  fails = {},
  retriesWrites = true,
  storeMs = 0,
  holds = () => true,
}: {
  fails?: Partial<Record<RoundStep, number>>;
  retriesWrites?: boolean;
  storeMs?: number;
  holds?: () => boolean;
} = {}) {
  const calls: string[] = [];
  const left = { plan: 0, store: 0, commit: 0, ...fails };
  const step =
    (name: RoundStep, ms = 0) =>
    async () => {
      calls.push(name);
      if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms));
      if (left[name] > 0) {
        left[name] -= 1;
        throw new Error(`${name} refused`);
      }
    };
  const source: RoundSource<typeof round> = {
    plan: step('plan'),
    store: step('store', storeMs),
    commit: step('commit'),
    retriesWrites,
    holds,
    keepAlive: async () => void calls.push('keep alive'),
    failed: (failedStep) => void calls.push(`failed ${failedStep}`),
    ended: (endedStep, _round, done) => void calls.push(`ended ${endedStep} ${done}`),
  };
  return { source, calls };
}

const withoutKeepAlive = (calls: readonly string[]) => calls.filter((call) => call !== 'keep alive');

describe('the storing loop', () => {
  it('plans, stores, then commits a round, each once when nothing fails', async () => {
    const { source, calls } = fakeSource();
    expect(await runRound(round, source, log)).toBe(true);
    expect(calls).toEqual(['plan', 'ended plan true', 'store', 'ended store true', 'commit', 'ended commit true']);
  });

  it('retries a failed store with backoff, keeping the hold between tries, and commits only once it is stored', async () => {
    const { source, calls } = fakeSource({ fails: { store: 2 } });
    const started = Date.now();
    expect(await runRound(round, source, log)).toBe(true);
    // 100 ms after the first failed try, 200 ms after the second.
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(withoutKeepAlive(calls)).toEqual([
      'plan',
      'ended plan true',
      'store',
      'failed store',
      'store',
      'failed store',
      'store',
      'ended store true',
      'commit',
      'ended commit true',
    ]);
    expect(calls.filter((call) => call === 'keep alive').length).toBeGreaterThanOrEqual(2);
  });

  it('gives the round up, uncommitted, once the source no longer holds it', async () => {
    let held = true;
    const { source, calls } = fakeSource({ fails: { store: Number.POSITIVE_INFINITY }, holds: () => held });
    const running = runRound(round, source, log);
    await new Promise((resolve) => setTimeout(resolve, 250));
    held = false;
    expect(await running).toBe(false);
    expect(withoutKeepAlive(calls).slice(-2)).toEqual(['failed store', 'ended store false']);
    expect(calls).not.toContain('commit');
  });

  it('keeps the hold alive every 500 ms while a slow try runs', async () => {
    const { source, calls } = fakeSource({ storeMs: 1_300 });
    expect(await runRound(round, source, log)).toBe(true);
    const during = calls.slice(calls.indexOf('store') + 1, calls.indexOf('ended store true'));
    expect(during).toEqual(['keep alive', 'keep alive']);
  });

  it("retries a failed plan or commit when the source's writes fail for a while (a full disk)", async () => {
    const { source, calls } = fakeSource({ fails: { plan: 1, commit: 1 } });
    expect(await runRound(round, source, log)).toBe(true);
    expect(withoutKeepAlive(calls)).toEqual([
      'plan',
      'failed plan',
      'plan',
      'ended plan true',
      'store',
      'ended store true',
      'commit',
      'failed commit',
      'commit',
      'ended commit true',
    ]);
  });

  it("otherwise throws a failed plan or commit to the source's caller (kafkajs), storing nothing after a failed plan", async () => {
    const planning = fakeSource({ fails: { plan: 1 }, retriesWrites: false });
    await expect(runRound(round, planning.source, log)).rejects.toThrow('plan refused');
    expect(planning.calls).toEqual(['plan']);

    const committing = fakeSource({ fails: { commit: 1 }, retriesWrites: false });
    await expect(runRound(round, committing.source, log)).rejects.toThrow('commit refused');
    expect(committing.calls).toEqual(['plan', 'ended plan true', 'store', 'ended store true', 'commit']);
  });
});
