import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../shared/logger.ts';
import { exponentialDelay, retry } from '../shared/retry.ts';

export type RoundStep = 'plan' | 'store' | 'commit';

/**
 * A source of rounds, as the storing loop drives it: a Kafka fetch's batches (kafka-rounds.ts) or a
 * range of the embedded journal (journal-runner.ts). The source says how a round is planned, stored and
 * committed; the loop says in which order, how a failure is retried, and when the round is given up.
 */
export interface RoundSource<R extends { readonly token: string }> {
  /** Writes where the round ends and its token before any of it is stored, so that a replay is the same insert. */
  plan(round: R): Promise<void>;
  /** Stores the round; safe to repeat with the same token (every insert is deduplicated by it). */
  store(round: R): Promise<void>;
  /** Lets the source go past the round, once it is stored. */
  commit(round: R): Promise<void>;
  /**
   * Whether a failed plan or commit is tried again like a failed store (a journal on a full disk), or
   * thrown to the source's caller (a commit Kafka refuses is kafkajs's to handle: it rejoins the group).
   */
  readonly retriesWrites: boolean;
  /** False once the round is to be given up: the loop stops, or the source lost the round (the next owner replays it). */
  holds(round: R): boolean;
  /** Sent every KEEP_ALIVE_MS while the round is tried and between tries: a Kafka member's heartbeat. */
  keepAlive?(round: R): Promise<void>;
  /** Told of each failed try (a stall to report). */
  failed?(step: RoundStep, round: R): void;
  /** Told once a step is done (true) or given up (false). */
  ended?(step: RoundStep, round: R, done: boolean): void;
}

/**
 * How often a round being stored keeps its hold. A Kafka member silent for longer than the session
 * timeout is expelled while its insert may still land, and the next owners of its partitions replay
 * its batches regrouped, each decided before that insert is stored: both inserts keep the events (the
 * same batch token holds their claims). Heartbeating, the member stays in the group, which waits for
 * it to rejoin (up to the rebalance timeout) once its round is committed. (kafkajs sends a heartbeat
 * per heartbeatInterval at most, and only when asked.)
 */
const KEEP_ALIVE_MS = 500;

/** The one backoff of every step of every source: 100 ms after the first failed try, doubling to 5 s. */
const BACKOFF = exponentialDelay(100, 5_000);

const FAILED_EVENT: Record<RoundStep, string> = {
  plan: 'round_not_planned',
  store: 'round_not_stored',
  commit: 'round_not_committed',
};

/**
 * The one storing loop: plan → store → commit for a round of any source. The plan is written first
 * (write-ahead), then the round is stored, then committed; an outage pauses the round with backoff,
 * keeping the source's hold, and never skips it. Offsets or positions are committed only after the
 * store succeeded. True once stored and committed; false when the round was given up (the source's
 * next owner or next start replays it from its plan).
 */
export async function runRound<R extends { readonly token: string }>(
  round: R,
  source: RoundSource<R>,
  log: Logger,
): Promise<boolean> {
  for (const step of ['plan', 'store', 'commit'] as const) {
    const done =
      step === 'store' || source.retriesWrites
        ? await untilDone(step, round, source, log)
        : await once(step, round, source);
    source.ended?.(step, round, done);
    if (!done) return false;
  }
  return true;
}

/** A step tried once: a failure is thrown to the source's caller. */
async function once<R extends { readonly token: string }>(
  step: RoundStep,
  round: R,
  source: RoundSource<R>,
): Promise<boolean> {
  await keepingAlive(round, source, () => source[step](round));
  return true;
}

/** A step tried until it is done; false once the source no longer holds the round. */
async function untilDone<R extends { readonly token: string }>(
  step: RoundStep,
  round: R,
  source: RoundSource<R>,
  log: Logger,
): Promise<boolean> {
  const done = await retry(
    async (n) => {
      try {
        await keepingAlive(round, source, () => source[step](round));
        return true;
      } catch (error) {
        source.failed?.(step, round);
        log.warn({ err: error, token: round.token, attempt: n - 1 }, FAILED_EVENT[step]);
        return null;
      }
    },
    { delayMs: BACKOFF, wait: (ms) => holding(ms, round, source) },
  );
  return done === true;
}

/** Runs one try, keeping the source's hold meanwhile. */
async function keepingAlive<R extends { readonly token: string }, T>(
  round: R,
  source: RoundSource<R>,
  work: () => Promise<T>,
): Promise<T> {
  if (source.keepAlive === undefined) return work();
  const keepAlive = () => void source.keepAlive!(round).catch(() => undefined);
  const timer = setInterval(keepAlive, KEEP_ALIVE_MS);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}

/** Waits `ms` between tries in slices, keeping the hold; false once the source no longer holds the round. */
async function holding<R extends { readonly token: string }>(
  ms: number,
  round: R,
  source: RoundSource<R>,
): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (!source.holds(round)) return false;
    await sleep(Math.min(KEEP_ALIVE_MS, until - Date.now()));
    await source.keepAlive?.(round).catch(() => undefined);
  }
  return source.holds(round);
}
