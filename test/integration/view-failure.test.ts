import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plannedRoundReachedSources, startJournalRunner } from '../../services/consumer/journal-runner.ts';
import { createRecordWriter } from '../../services/consumer/record-writer.ts';
import { rebuildViews } from '../../services/consumer/rebuild-views.ts';
import { createClickHouse, type ClickHouse } from '../../services/shared/clickhouse/client.ts';
import { migrate } from '../../services/shared/clickhouse/migrate.ts';
import { tableName } from '../../services/shared/clickhouse/tables.ts';
import { loadConfig } from '../../services/shared/config.ts';
import { createLogger } from '../../services/shared/logger.ts';
import { DEFAULT_RATE_CARD_URL, loadRateCard } from '../../services/domain/pricing/index.ts';
import { makeEnvelope } from '../../services/domain/records/index.ts';
import { RecordJournal } from '../../services/domain/records/index.ts';
import { MemoryLiveUsage } from '../../services/shared/redis/live-usage.ts';
import { eventually, isolate } from '../support/harness.ts';
import { makeUsageRecord } from '../support/records.ts';
import { expectedTotals, expectSessionsCountedOnce, storedTotals } from '../support/rollups.ts';

const log = createLogger('silent');
const USER = 'view-failure-user';

/**
 * An insert into usage_events is not atomic across its materialized views: when one view's insert
 * fails, the source and the views before it keep the block and the insert fails. These run the
 * embedded journal's writer against the embedded engine with one view's table refusing every insert
 * (a constraint no row satisfies), and check that every rollup ends equal to usage_events.
 */
describe('a round whose materialized view failed, in the embedded journal', () => {
  const isolation = isolate('view-failure');
  let ch: ClickHouse;
  let card: Awaited<ReturnType<typeof loadRateCard>>;
  const journalDir = `${isolation.dataDir}/journal`;
  const sessionId = randomUUID();
  const view = () => tableName(ch, 'usageTotalsDaily');
  // Every event is 100 characters of text-to-speech: 0.004 at the default card's 0.00004 a character.
  const once = (n: number) => expectedTotals(n, (n * 0.004).toFixed(3).replace(/\.?0+$/, ''));

  const writer = (liveUsage = new MemoryLiveUsage()) =>
    createRecordWriter({ ch, reads: ch, log, card, claims: null, liveUsage, deadLetterTopic: null });
  let appended = 0;
  /** Appends `count` usage events of `session` and gives their records. */
  const appendUsage = async (journal: RecordJournal, count: number, session = sessionId) => {
    const records = Array.from({ length: count }, () => makeUsageRecord({ session_id: session, user_id: USER }));
    appended += count;
    await journal.append(
      records.map((record) => JSON.stringify(makeEnvelope('usage', session, record, new Date(), new Date()))),
    );
    return records;
  };
  const failView = () => ch.client.command({ query: `ALTER TABLE ${view()} ADD CONSTRAINT fault_injected CHECK 0` });
  const healView = () => ch.client.command({ query: `ALTER TABLE ${view()} DROP CONSTRAINT fault_injected` });

  /**
   * Fails a view and appends rounds of `count` events until one stalls with usage_events holding it
   * and the failed view not: the case these tests are about. The views are written beside the source
   * (parallel_view_processing), so a failing view sometimes keeps the source's part from being
   * committed as well; such a round is healed, checked stored once, and another one tried.
   */
  async function stallWithSourceStored(
    journal: RecordJournal,
    runner: ReturnType<typeof startJournalRunner>,
    count: number,
    fault: { fail: () => Promise<unknown>; heal: () => Promise<unknown> } = { fail: failView, heal: healView },
    session: () => typeof sessionId = () => sessionId,
  ): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      await fault.fail();
      await appendUsage(journal, count, session());
      await eventually(async () => expect(runner.stalled(0)).not.toBeNull(), 30_000);
      const stored = (await storedTotals(ch)).usage_events;
      if (isDeepStrictEqual(stored, once(appended).usage_events)) return;
      expect(stored).toEqual(once(appended - count).usage_events);
      expect(attempt, 'rounds whose source part was not committed either').toBeLessThan(5);
      await fault.heal();
      expect(await journal.caughtUp(30_000)).toBe(true);
      expect(await storedTotals(ch)).toEqual(once(appended));
    }
  }

  beforeAll(async () => {
    ch = await createClickHouse(
      loadConfig({ DATA_DIR: isolation.dataDir, CLICKHOUSE_DATABASE: isolation.database, LOG_LEVEL: 'silent' }),
    );
    await migrate(ch, log);
    card = await loadRateCard(DEFAULT_RATE_CARD_URL);
  });

  afterAll(async () => {
    await ch?.client.close();
  });

  it('retries the round until the view that failed has it, counted once in every other table', async () => {
    const journal = await RecordJournal.open(journalDir);
    const liveUsage = new MemoryLiveUsage();
    const runner = startJournalRunner({ journal, writer: writer(liveUsage), log, afterRebuild: false });
    await appendUsage(journal, 5);
    expect(await journal.caughtUp(30_000)).toBe(true);
    expect(await storedTotals(ch)).toEqual(once(5));

    // The fault as it happens: usage_events and some views took the round, the failed view did not.
    await stallWithSourceStored(journal, runner, 3);
    expect((await storedTotals(ch)).usage_totals_daily).toEqual(once(appended - 3).usage_totals_daily);

    await healView();
    expect(await journal.caughtUp(30_000)).toBe(true);
    expect(await storedTotals(ch)).toEqual(once(appended));
    // The retry that stored the round went on to its live usage, as a first try would have.
    expect(await liveUsage.read(sessionId)).toHaveLength(appended);
    await expectSessionsCountedOnce(ch, 1);
    await runner.stop();
    await journal.close();
  });

  it('after a clean restart that found the failed round planned, rebuilds the views and counts the round once everywhere', async () => {
    const journal = await RecordJournal.open(journalDir);
    const runner = startJournalRunner({ journal, writer: writer(), log, afterRebuild: false });
    await stallWithSourceStored(journal, runner, 4);
    // A clean stop while the round fails leaves it planned; the next start finds it.
    await runner.stop();
    await journal.close();
    await healView();

    const reopened = await RecordJournal.open(journalDir);
    expect(reopened.planned()).not.toBeNull();
    const afterRebuild = await plannedRoundReachedSources(reopened, ch);
    expect(afterRebuild).toBe(true);
    await rebuildViews(ch, log);
    const restarted = startJournalRunner({ journal: reopened, writer: writer(), log, afterRebuild });
    await appendUsage(reopened, 2);
    expect(await reopened.caughtUp(30_000)).toBe(true);
    expect(await storedTotals(ch)).toEqual(once(appended));
    await expectSessionsCountedOnce(ch, 1);
    await restarted.stop();
    await reopened.close();
  });

  it('does not rebuild after a clean restart whose planned round never reached the tables', async () => {
    const journal = await RecordJournal.open(journalDir);
    // ClickHouse refusing usage_events itself: the round stores nothing anywhere.
    await ch.client.command({
      query: `ALTER TABLE ${tableName(ch, 'usageEvents')} ADD CONSTRAINT fault_injected CHECK 0`,
    });
    const runner = startJournalRunner({ journal, writer: writer(), log, afterRebuild: false });
    await appendUsage(journal, 3);
    await eventually(async () => expect(runner.stalled(0)).not.toBeNull(), 30_000);
    await runner.stop();
    await ch.client.command({ query: `ALTER TABLE ${tableName(ch, 'usageEvents')} DROP CONSTRAINT fault_injected` });
    expect(journal.planned()).not.toBeNull();
    expect(await plannedRoundReachedSources(journal, ch)).toBe(false);
    const restarted = startJournalRunner({ journal, writer: writer(), log, afterRebuild: false });
    expect(await journal.caughtUp(30_000)).toBe(true);
    expect(await storedTotals(ch)).toEqual(once(appended));
    await restarted.stop();
    await journal.close();
  });

  it('counts a new session once when the view that counts it failed in the round that first stored it', async () => {
    const starts = tableName(ch, 'usageSessionStarts');
    const journal = await RecordJournal.open(journalDir);
    const runner = startJournalRunner({ journal, writer: writer(), log, afterRebuild: false });
    const sessions = new Set([sessionId]);
    const newSession = () => {
      const id = randomUUID();
      sessions.add(id);
      return id;
    };
    const fault = {
      fail: () => ch.client.command({ query: `ALTER TABLE ${starts} ADD CONSTRAINT fault_injected CHECK 0` }),
      heal: () => ch.client.command({ query: `ALTER TABLE ${starts} DROP CONSTRAINT fault_injected` }),
    };
    // usage_events took the round with its session marked, and the counting view did not.
    await stallWithSourceStored(journal, runner, 3, fault, newSession);
    await fault.heal();
    expect(await journal.caughtUp(30_000)).toBe(true);
    expect(await storedTotals(ch)).toEqual(once(appended));
    await expectSessionsCountedOnce(ch, sessions.size);
    await runner.stop();
    await journal.close();
  });

  it('stores a planned round whole after a clean restart when the id index took its events and usage_events did not', async () => {
    const ids = tableName(ch, 'usageEventIds');
    const source = tableName(ch, 'usageEvents');
    const journal = await RecordJournal.open(journalDir);
    const runner = startJournalRunner({ journal, writer: writer(), log, afterRebuild: false });
    await ch.client.command({ query: `ALTER TABLE ${source} ADD CONSTRAINT fault_injected CHECK 0` });
    const records = await appendUsage(journal, 3);
    await eventually(async () => expect(runner.stalled(0)).not.toBeNull(), 30_000);
    await runner.stop();
    await ch.client.command({ query: `ALTER TABLE ${source} DROP CONSTRAINT fault_injected` });
    // What a failed insert leaves when the index's part was committed and usage_events' was not.
    await ch.client.insert({
      table: ids,
      values: records.map(({ user_id, event_id }) => ({ user_id, id: event_id })),
      format: 'JSONEachRow',
    });
    expect(await plannedRoundReachedSources(journal, ch)).toBe(false);

    const restarted = startJournalRunner({ journal, writer: writer(), log, afterRebuild: false });
    expect(await journal.caughtUp(30_000)).toBe(true);
    // The replay's index rows repeat the ones put in by hand (the view's own part would have dropped them).
    await ch.client.command({ query: `OPTIMIZE TABLE ${ids} FINAL` });
    expect(await storedTotals(ch)).toEqual(once(appended));
    await expectSessionsCountedOnce(ch);
    await restarted.stop();
    await journal.close();
  });
});
