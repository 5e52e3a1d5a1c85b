import { beforeAll, describe, expect, it } from 'vitest';
import { memoryClaims } from '../../test/support/memory-claims.ts';
import { fakeClickHouse, type FakeClickHouseOptions } from '../../test/support/fake-clickhouse.ts';
import { makeUsageEnvelope } from '../../test/support/records.ts';
import { makeMember, makeMessage, makeRound } from '../../test/support/rounds.ts';
import { eventKey, type RecordSource } from '../shared/clickhouse/tables/usage-events.ts';
import { createLogger } from '../shared/logger.ts';
import { DEFAULT_RATE_CARD_URL, loadRateCard, type RateCard } from '../domain/pricing/index.ts';
import type { Envelope } from '../domain/records/index.ts';
import type { UsageRecord } from '../domain/records/index.ts';
import { MemoryLiveUsage } from '../shared/redis/live-usage.ts';
import type { StoredAnnouncement, StoredAnnouncements } from '../shared/redis/stored-announcements.ts';
import { createRecordWriter, type RecordWriterDeps } from './record-writer.ts';

const log = createLogger('silent');
let card: RateCard;
beforeAll(async () => {
  card = await loadRateCard(DEFAULT_RATE_CARD_URL);
});

const usageOf = (envelope: Envelope) => envelope.payload as UsageRecord;
const keyOf = (envelope: Envelope) => eventKey(usageOf(envelope).user_id, usageOf(envelope).event_id);

/** A writer over fakes of every port; `steps` notes, in order, what each port was asked. */
function writerWith({
  clickhouse = {},
  claims = true,
  ...deps
}: {
  clickhouse?: FakeClickHouseOptions;
  claims?: boolean;
} & Partial<Omit<RecordWriterDeps, 'claims'>> = {}) {
  const { ch, inserts, steps } = fakeClickHouse(clickhouse);
  const liveUsage = new MemoryLiveUsage();
  const noted = {
    record: async (...args: Parameters<MemoryLiveUsage['record']>) => {
      steps.push('live usage');
      await liveUsage.record(...args);
    },
    read: (sessionId: string) => liveUsage.read(sessionId),
  };
  const announced: StoredAnnouncement[] = [];
  const announcements = {
    publish: async (announcement: StoredAnnouncement) => {
      steps.push('announce');
      announced.push(announcement);
    },
  } as unknown as StoredAnnouncements;
  const writer = createRecordWriter({
    ch,
    reads: ch,
    log,
    card,
    claims: claims ? memoryClaims(steps) : null,
    liveUsage: noted,
    announcements,
    deadLetterTopic: null,
    ...deps,
  });
  return { writer, inserts, steps, liveUsage, announced };
}

const usageRows = (inserts: ReturnType<typeof fakeClickHouse>['inserts']) =>
  inserts.filter(({ table }) => table === 'usage_events').flatMap(({ rows }) => rows);

describe('the record writer', () => {
  it('stores a round in its steps: claims and the stored-id lookup, one insert, the release, live usage, the announcement', async () => {
    const { writer, inserts, steps, liveUsage, announced } = writerWith();
    const events = [makeUsageEnvelope(), makeUsageEnvelope()];
    const member = makeMember(events.map((event, i) => makeMessage(event, i)));
    const stored = await writer.handleRound(makeRound([member], 'round-1'));

    expect(steps).toEqual([
      `claim ${member.token}`,
      'lookup',
      'insert usage_events',
      `release ${member.token}`,
      'live usage',
      'live usage',
      'announce',
    ]);
    expect(inserts.map(({ token }) => token)).toEqual(['round-1:usageEvents']);
    expect(usageRows(inserts).map(({ id, cost }) => [id, cost])).toEqual(
      events.map((event) => [usageOf(event).event_id, '0.004']),
    );
    expect(await liveUsage.read(usageOf(events[0]!).session_id)).toHaveLength(1);
    expect(announced).toEqual([{ tenants: ['user-1'], sessions: events.map((event) => usageOf(event).session_id) }]);
    expect(stored.envelopes).toEqual(events);
  });

  it('retries a round with the rows it decided first, and decides again once the round is stored', async () => {
    let failing = true;
    const outage = () => (failing ? new Error('too many parts') : null);
    const { writer, inserts, steps } = writerWith({ clickhouse: { fail: outage } });
    const member = makeMember([makeMessage(makeUsageEnvelope(), 0)]);
    const round = makeRound([member], 'round-1');
    await expect(writer.handleRound(round)).rejects.toThrow('too many parts');
    failing = false;
    await writer.handleRound(round);
    // Decided once: one claim and one lookup for both tries (a view that failed then takes the same rows).
    expect(steps.filter((step) => step.startsWith('claim') || step === 'lookup')).toHaveLength(2);
    expect(usageRows(inserts)).toHaveLength(1);

    // Stored: its decision is gone, and a replay is decided again (its own stored event left out).
    await writer.handleRound(round);
    expect(steps.filter((step) => step.startsWith('claim'))).toHaveLength(2);
  });

  it('dead-letters what cannot be decoded and what ClickHouse refuses, leaving both out of live usage and the announcement', async () => {
    const kept = makeUsageEnvelope();
    const refused = makeUsageEnvelope({ quantity: '7' });
    const { writer, inserts, liveUsage, announced } = writerWith({
      clickhouse: { refuse: (row) => row.id === usageOf(refused).event_id },
    });
    const member = makeMember([makeMessage(kept, 0), makeMessage('not json', 1), makeMessage(refused, 2)]);
    await writer.handleRound(makeRound([member]));

    expect(usageRows(inserts).map(({ id }) => id)).toEqual([usageOf(kept).event_id]);
    const dead = inserts.filter(({ table }) => table === 'dead_letters');
    expect(dead.map(({ token }) => token)).toEqual([`${member.token}:deadLetters`]);
    expect(dead[0]!.rows.map(({ kind, kafka_offset, reason }) => [kind, kafka_offset, reason])).toEqual([
      ['unknown', '1', 'record value is not JSON'],
      ['usage', '2', 'ClickHouse refused the record (TYPE_MISMATCH): Cannot parse input'],
    ]);
    expect(await liveUsage.read(usageOf(refused).session_id)).toEqual([]);
    expect(announced.flatMap(({ sessions }) => sessions)).toEqual([usageOf(kept).session_id]);
  });

  it('inserts a batch planned before the views were rebuilt under this process token, leaving its stored events out', async () => {
    const stored = makeUsageEnvelope();
    const fresh = makeUsageEnvelope();
    const member = makeMember([makeMessage(stored, 0), makeMessage(fresh, 1)]);
    const { writer, inserts } = writerWith({
      claims: false,
      clickhouse: { stored: new Set([keyOf(stored)]) },
      pendingReplays: { has: (token) => token === member.token, id: '00000000-0000-4000-8000-00000000000a' },
    });
    await writer.handleRound(makeRound([member], 'round-1'));
    expect(inserts.map(({ token }) => token)).toEqual([
      'round-1:rebuild-00000000-0000-4000-8000-00000000000a:usageEvents',
    ]);
    expect(usageRows(inserts).map(({ id }) => id)).toEqual([usageOf(fresh).event_id]);
  });

  it('leaves out the stored events of an uncertain batch (regrouped), where a batch replaying its own claims keeps them', async () => {
    const events = [makeUsageEnvelope(), makeUsageEnvelope()];
    const stored = new Set<string>();
    const places = new Map<string, RecordSource[]>();
    let failing = true;
    const { writer, inserts } = writerWith({
      clickhouse: { stored, places, fail: () => (failing ? new Error('timeout') : null) },
    });
    const members = events.map((event, partition) => makeMember([makeMessage(event, 0)], { partition }));
    // The first round claims both events, and its insert lands while its member is told it failed.
    await expect(writer.handleRound(makeRound(members, 'round-a'))).rejects.toThrow('timeout');
    events.forEach((event, partition) => {
      stored.add(keyOf(event));
      places.set(keyOf(event), [{ partition, offset: '0' }]);
    });
    failing = false;

    // Regrouped into a new round: the uncertain batch looks its events up, the other keeps its claim's.
    await writer.handleRound(makeRound([{ ...members[0]!, uncertain: true }, members[1]!], 'round-b'));
    expect(usageRows(inserts).map(({ id }) => id)).toEqual([usageOf(events[1]!).event_id]);
  });
});
