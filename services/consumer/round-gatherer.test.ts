import { describe, expect, it } from 'vitest';
import { RoundGatherer } from './round-gatherer.ts';

const turn = () => new Promise((resolve) => setImmediate(resolve));

function gatherer() {
  const rounds: number[][] = [];
  let release = () => {};
  const gathering = new RoundGatherer<number>(async (batches) => {
    rounds.push(batches);
    await new Promise<void>((resolve) => (release = resolve));
  });
  return { gathering, rounds, release: () => release() };
}

describe('RoundGatherer', () => {
  it('stores the batches that entered in one turn together, once the last of them is ready', async () => {
    const { gathering, rounds } = gatherer();
    for (let i = 0; i < 3; i += 1) gathering.enter();
    gathering.arrive(1);
    gathering.arrive(2);
    await turn();
    await turn();
    expect(rounds).toEqual([]);
    gathering.arrive(3);
    await turn();
    expect(rounds).toEqual([[1, 2, 3]]);
  });

  it('keeps what arrives while a round is stored for the next round, and skips a batch with nothing to store', async () => {
    const { gathering, rounds, release } = gatherer();
    gathering.enter();
    gathering.arrive(1);
    await turn();
    expect(rounds).toEqual([[1]]);
    for (let i = 0; i < 3; i += 1) gathering.enter();
    gathering.arrive(2);
    gathering.arrive(null);
    gathering.arrive(3);
    await turn();
    expect(rounds).toEqual([[1]]);
    release();
    await turn();
    await turn();
    expect(rounds).toEqual([[1], [2, 3]]);
  });
});
