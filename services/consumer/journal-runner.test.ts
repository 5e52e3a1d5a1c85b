import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fakeClickHouse } from '../../test/support/fake-clickhouse.ts';
import { makeSessionEnvelope } from '../../test/support/records.ts';
import type { ClickHouse } from '../shared/clickhouse/client.ts';
import { createLogger } from '../shared/logger.ts';
import { DEFAULT_RATE_CARD_URL, loadRateCard } from '../domain/pricing/index.ts';
import { decodeRecord, type Envelope } from '../domain/records/index.ts';
import { RecordJournal } from '../domain/records/index.ts';
import { MemoryLiveUsage } from '../shared/redis/live-usage.ts';
import { startJournalRunner, type RoundGathering } from './journal-runner.ts';
import { createRecordWriter } from './record-writer.ts';
import type { Round } from './round.ts';

const log = createLogger('silent');
const folders: string[] = [];
afterEach(() => {
  for (const made of folders.splice(0)) rmSync(made, { recursive: true, force: true });
});
async function openJournal(where = mkdtempSync(path.join(tmpdir(), 'journal-runner-'))) {
  folders.push(where);
  return { where, journal: await RecordJournal.open(where) };
}

/**
 * The writer the runner hands its rounds to (a real one, over `ch`): records what each round held, and
 * fails while `failing` says so.
 */
async function fakeWriter(ch: ClickHouse = fakeClickHouse().ch) {
  const real = createRecordWriter({
    ch,
    reads: ch,
    log,
    card: await loadRateCard(DEFAULT_RATE_CARD_URL),
    claims: null,
    liveUsage: new MemoryLiveUsage(),
    deadLetterTopic: null,
  });
  const rounds: { token: string; keys: string[]; uncertain: boolean }[] = [];
  const state = { failing: 0 };
  return {
    rounds,
    state,
    handleRound: async (round: Round) => {
      if (state.failing > 0) {
        state.failing -= 1;
        throw new Error('too many parts');
      }
      const [member] = round.members;
      const decoded = member!.messages.map(({ value }) => decodeRecord(value));
      const keys = decoded.flatMap((record) => (record.ok ? [roomOf(record.envelope)] : []));
      rounds.push({ token: round.token, uncertain: member!.uncertain, keys });
      return real.handleRound(round);
    },
  };
}

/** A journal, a writer over it, and a runner storing its rounds gathered as `gather` says. */
async function gathering(gather: RoundGathering) {
  const { journal } = await openJournal();
  const writer = await fakeWriter();
  return { journal, writer, runner: startJournalRunner({ journal, writer, log, afterRebuild: false, gather }) };
}

/** The label each test record carries: its session's room. */
const roomOf = (envelope: Envelope) => (envelope.payload as { room_name: string }).room_name;

const appendSessions = (journal: RecordJournal, keys: readonly string[]) =>
  journal.append(keys.map((room) => JSON.stringify(makeSessionEnvelope({ room_name: room }))));

describe('the journal runner', () => {
  it('stores what was appended in rounds, in order, each under its range, and lets waiting reads through', async () => {
    const { journal } = await openJournal();
    const writer = await fakeWriter();
    const runner = startJournalRunner({ journal, writer, log, afterRebuild: false });
    await appendSessions(journal, ['s1', 's2', 's3']);
    expect(await journal.caughtUp(5_000)).toBe(true);
    await appendSessions(journal, ['s4']);
    expect(await journal.caughtUp(5_000)).toBe(true);
    expect(writer.rounds.flatMap(({ keys }) => keys)).toEqual(['s1', 's2', 's3', 's4']);
    expect(writer.rounds.at(-1)!.token).toBe(`journal:${journal.id}:3-4`);
    // Stored rounds leave the journal.
    expect(await journal.read(0, 4)).toEqual([]);
    await runner.stop();
    await journal.close();
  });

  it('while busy, gathers records into one round until the time since the last round passes or enough wait', async () => {
    const { journal, writer, runner } = await gathering({ ms: 400, records: 5 });
    // An idle writer stores at once.
    await appendSessions(journal, ['s1']);
    await journal.storedThrough(journal.appended(), false);
    // Busy (its round just started): one at a time, they wait for the time to pass, and go in one round.
    const started = performance.now();
    await appendSessions(journal, ['s2']);
    await appendSessions(journal, ['s3']);
    await journal.storedThrough(journal.appended(), false);
    expect(performance.now() - started).toBeGreaterThanOrEqual(300);
    expect(writer.rounds.map(({ keys }) => keys)).toEqual([['s1'], ['s2', 's3']]);
    // As many as `records` go at once.
    const many = performance.now();
    await appendSessions(journal, ['s4', 's5', 's6', 's7', 's8']);
    await journal.storedThrough(journal.appended(), false);
    expect(performance.now() - many).toBeLessThan(300);
    expect(writer.rounds.at(-1)!.keys).toEqual(['s4', 's5', 's6', 's7', 's8']);
    await runner.stop();
    await journal.close();
  });

  it('stops gathering for a read that waits, and for a second after it, but not for a wait in the background', async () => {
    const { journal, writer, runner } = await gathering({ ms: 2_000, records: 100 });
    await appendSessions(journal, ['s1']);
    await journal.storedThrough(journal.appended(), false);
    // A background wait (a refresh's) leaves the round gathering.
    await appendSessions(journal, ['s2']);
    const background = journal.storedThrough(journal.appended(), false);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(writer.rounds).toHaveLength(1);
    // A request's read stores it at once.
    const urgent = performance.now();
    expect(await journal.caughtUp(5_000)).toBe(true);
    await background;
    expect(performance.now() - urgent).toBeLessThan(1_000);
    // Right after a read waited, the next round does not gather either.
    const next = performance.now();
    await appendSessions(journal, ['s3']);
    await journal.storedThrough(journal.appended(), false);
    expect(performance.now() - next).toBeLessThan(1_000);
    expect(writer.rounds.map(({ keys }) => keys)).toEqual([['s1'], ['s2'], ['s3']]);
    await runner.stop();
    await journal.close();
  });

  it("stops gathering for the records of a tenant whose read waited, not for another tenant's alone", async () => {
    const { journal, writer, runner } = await gathering({ ms: 2_000, records: 100 });
    const appendOf = (tenant: string, room: string) =>
      journal.append([JSON.stringify(makeSessionEnvelope({ room_name: room }))], [tenant]);
    await appendOf('a', 'a1');
    await journal.storedThrough(journal.appended(), false);
    // Busy now: tenant a's read stores its record at once.
    await appendOf('a', 'a2');
    const read = performance.now();
    expect(await journal.caughtUp(5_000, 'a')).toBe(true);
    expect(performance.now() - read).toBeLessThan(1_000);
    // Tenant b has read nothing: its record gathers, though a read of a's waited a moment ago.
    await appendOf('b', 'b1');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(writer.rounds).toHaveLength(2);
    // Tenant a's next record goes at once, and takes b's waiting beside it.
    const next = performance.now();
    await appendOf('a', 'a3');
    await journal.storedThrough(journal.appended(), false);
    expect(performance.now() - next).toBeLessThan(1_000);
    expect(writer.rounds.map(({ keys }) => keys)).toEqual([['a1'], ['a2'], ['b1', 'a3']]);
    await runner.stop();
    await journal.close();
  });

  it('retries a round that failed under the same token, and says it is stalled meanwhile', async () => {
    const { journal } = await openJournal();
    const writer = await fakeWriter();
    writer.state.failing = 2;
    const runner = startJournalRunner({ journal, writer, log, afterRebuild: false });
    await appendSessions(journal, ['s1']);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(runner.stalled(0)).toMatch(/has not been stored for/);
    expect(await journal.caughtUp(5_000)).toBe(true);
    expect(writer.rounds).toEqual([{ token: `journal:${journal.id}:0-1`, uncertain: false, keys: ['s1'] }]);
    expect(runner.stalled(0)).toBeNull();
    await runner.stop();
    await journal.close();
  });

  it('retries planning a round on a disk that refuses it, and says it is stalled meanwhile', async () => {
    const { journal } = await openJournal();
    const writer = await fakeWriter();
    await appendSessions(journal, ['s1']);
    journal.refuseWritesFor(400);
    const runner = startJournalRunner({ journal, writer, log, afterRebuild: false });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(runner.stalled(0)).toMatch(/has not been stored for/);
    expect(journal.planned()).toBeNull();
    // Not caughtUp: it answers at once while the journal refuses writes. The runner resumes its loop
    // just after the mark lets the waiters through.
    await journal.storedThrough(journal.appended());
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(writer.rounds.flatMap(({ keys }) => keys)).toEqual(['s1']);
    expect(runner.stalled(0)).toBeNull();
    await runner.stop();
    await journal.close();
  });

  it('says it is stalled while the journal refuses to mark a stored round, and stores it once after', async () => {
    const { journal } = await openJournal();
    const writer = await fakeWriter();
    const slow = {
      handleRound: async (round: Round) => {
        const stored = await writer.handleRound(round);
        // The disk fills between the insert and the journal's mark of it.
        journal.refuseWritesFor(300);
        return stored;
      },
    };
    const runner = startJournalRunner({ journal, writer: slow, log, afterRebuild: false });
    await appendSessions(journal, ['s1']);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(runner.stalled(0)).toMatch(/has not been stored for/);
    // Not caughtUp: it answers at once while the journal refuses writes. The runner resumes its loop
    // just after the mark lets the waiters through.
    await journal.storedThrough(journal.appended());
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(writer.rounds.flatMap(({ keys }) => keys)).toEqual(['s1']);
    expect(runner.stalled(0)).toBeNull();
    await runner.stop();
    await journal.close();
  });

  it('dead-letters what the writer refused and what cannot be decoded, at their journal positions', async () => {
    const { journal } = await openJournal();
    const { ch, inserts } = fakeClickHouse({ refuse: (row) => row.room_name === 'poison' });
    const writer = await fakeWriter(ch);
    const runner = startJournalRunner({ journal, writer, log, afterRebuild: false });
    const session = (room: string) => JSON.stringify(makeSessionEnvelope({ room_name: room }));
    await journal.append([session('s1'), session('poison'), 'not json']);
    expect(await journal.caughtUp(5_000)).toBe(true);
    expect(writer.rounds.flatMap(({ keys }) => keys)).toEqual(['s1', 'poison']);
    const dead = inserts.filter(({ table }) => table === 'dead_letters');
    expect(dead.map(({ token }) => token)).toEqual([`journal:${journal.id}:0-3:dead:deadLetters`]);
    const letters = dead[0]!.rows.map(({ kind, reason, topic, kafka_partition, kafka_offset }) => ({
      kind,
      reason,
      topic,
      kafka_partition,
      kafka_offset,
    }));
    expect(letters).toEqual([
      { kind: 'unknown', reason: 'record value is not JSON', topic: 'journal', kafka_partition: -1, kafka_offset: '2' },
      {
        kind: 'session',
        reason: 'ClickHouse refused the record (TYPE_MISMATCH): Cannot parse input',
        topic: 'journal',
        kafka_partition: -1,
        kafka_offset: '1',
      },
    ]);
    await runner.stop();
    await journal.close();
  });

  it('dead-letters a refused record at its own position when an undecodable one comes before it', async () => {
    const { journal } = await openJournal();
    const { ch, inserts } = fakeClickHouse({ refuse: (row) => row.room_name === 'poison' });
    const runner = startJournalRunner({ journal, writer: await fakeWriter(ch), log, afterRebuild: false });
    const poison = JSON.stringify(makeSessionEnvelope({ room_name: 'poison' }));
    await journal.append(['not json', JSON.stringify(makeSessionEnvelope({ room_name: 's1' })), poison]);
    expect(await journal.caughtUp(5_000)).toBe(true);
    const letters = inserts.filter(({ table }) => table === 'dead_letters').flatMap(({ rows }) => rows);
    expect(letters.map(({ kafka_offset, record }) => [kafka_offset, record])).toEqual([
      ['0', 'not json'],
      ['2', poison],
    ]);
    await runner.stop();
    await journal.close();
  });

  it('tells onStored what each round held once it is stored, and retries the round when that fails', async () => {
    const { journal } = await openJournal();
    const writer = await fakeWriter();
    const told: string[][] = [];
    let refusals = 1;
    const onStored = async (envelopes: readonly Envelope[]) => {
      if (refusals-- > 0) throw new Error('announcements unavailable');
      told.push(envelopes.map(roomOf));
    };
    const runner = startJournalRunner({ journal, writer, log, afterRebuild: false, onStored });
    await appendSessions(journal, ['s1', 's2']);
    expect(await journal.caughtUp(5_000)).toBe(true);
    expect(told).toEqual([['s1', 's2']]);
    expect(writer.rounds.map(({ token }) => token)).toEqual([`journal:${journal.id}:0-2`, `journal:${journal.id}:0-2`]);
    await runner.stop();
    await journal.close();
  });

  it('replays the round planned before a restart: under its own token, or after a rebuild under a fresh one, leaving stored events out', async () => {
    const { where, journal } = await openJournal();
    await appendSessions(journal, ['s1', 's2']);
    await journal.plan({ from: 0, to: 2, token: `journal:${journal.id}:0-2` });
    await appendSessions(journal, ['s3']);
    await journal.close();

    const clean = await RecordJournal.open(where);
    const writer = await fakeWriter();
    writer.state.failing = 1;
    // Stopped while its first try fails: the plan stays for the next start.
    const stopped = startJournalRunner({ journal: clean, writer, log, afterRebuild: false });
    await new Promise((resolve) => setTimeout(resolve, 30));
    await stopped.stop();
    await clean.close();

    const rebuilt = await RecordJournal.open(where);
    const runner = startJournalRunner({ journal: rebuilt, writer, log, afterRebuild: true });
    expect(await rebuilt.caughtUp(5_000)).toBe(true);
    expect(writer.rounds[0]).toMatchObject({ keys: ['s1', 's2'], uncertain: true });
    expect(writer.rounds[0]!.token).toMatch(new RegExp(`^journal:${rebuilt.id}:0-2:rebuild-`));
    // The round after it is planned as usual, from where the replay ended.
    expect(writer.rounds[1]).toEqual({ token: `journal:${rebuilt.id}:2-3`, uncertain: false, keys: ['s3'] });
    await runner.stop();
    await rebuilt.close();
  });
});
