import { describe, expect, it } from 'vitest';
import { DecidedRounds } from './decided-rounds.ts';

describe('DecidedRounds', () => {
  it('decides a round once: a retry under the same token gets the first decision, made again only once forgotten', async () => {
    const decided = new DecidedRounds<string>(4);
    let made = 0;
    const decide = async () => `decision ${++made}`;
    expect(await decided.decide('round-1', decide)).toBe('decision 1');
    expect(await decided.decide('round-1', decide)).toBe('decision 1');
    decided.forget('round-1');
    expect(await decided.decide('round-1', decide)).toBe('decision 2');
  });

  it('makes a failed decision again on the next try', async () => {
    const decided = new DecidedRounds<string>(4);
    await expect(decided.decide('round-1', async () => Promise.reject(new Error('redis down')))).rejects.toThrow();
    expect(decided.has('round-1')).toBe(false);
    expect(await decided.decide('round-1', async () => 'decided')).toBe('decided');
  });

  it('keeps the most recently tried rounds, dropping the one tried longest ago past its limit', async () => {
    const decided = new DecidedRounds<string>(2);
    await decided.decide('a', async () => 'a');
    await decided.decide('b', async () => 'b');
    // Tried again: now the most recent, so b goes first.
    await decided.decide('a', async () => 'a again');
    await decided.decide('c', async () => 'c');
    expect(['a', 'b', 'c'].filter((token) => decided.has(token))).toEqual(['a', 'c']);
  });
});
