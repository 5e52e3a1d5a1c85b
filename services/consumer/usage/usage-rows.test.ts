import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { fakeClickHouse } from '../../../test/support/fake-clickhouse.ts';
import { memoryClaims } from '../../../test/support/memory-claims.ts';
import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import {
  eventKey,
  sessionKey,
  type RecordSource,
  type SessionMark,
} from '../../shared/clickhouse/tables/usage-events.ts';
import { DEFAULT_RATE_CARD_URL, loadRateCard, type RateCard } from '../../domain/pricing/index.ts';
import type { UsageRecord } from '../../domain/records/index.ts';
import { usageRows, type UsageGroup } from './usage-rows.ts';
import { CountedSessions } from './session-firsts.ts';

/**
 * A ClickHouse whose stored-id lookup answers from `stored`, and whose lookup of stored places from
 * `places` (eventKey → the sources of its stored rows); notes what it was asked.
 */
function storedIds(
  stored: Set<string>,
  steps: string[],
  asked: string[][],
  places = new Map<string, RecordSource[]>(),
): ClickHouse {
  return fakeClickHouse({ stored, places, steps, asked }).ch;
}

function record(eventId = randomUUID(), user = 'tenant-a'): UsageRecord {
  const at = new Date().toISOString();
  return {
    event_id: eventId,
    session_id: '00000000-0000-4000-8000-000000000001',
    user_id: user,
    agent_id: null,
    provider: 'resemble',
    event_type: 'tts_characters',
    model: null,
    quantity: '100',
    input_tokens: null,
    output_tokens: null,
    reported_unit_cost: null,
    reported_total_cost: null,
    occurred_at: at,
    received_at: at,
  } as UsageRecord;
}

const group = (records: UsageRecord[], claimToken: string, storedWins = false): UsageGroup => ({
  items: records.map((r, i) => ({ record: r, source: { partition: 0, offset: String(i) } })),
  claimToken,
  storedWins,
});
const keyOf = (r: UsageRecord) => eventKey(r.user_id, r.event_id);

describe('usage rows with claims held only while a round is in flight', () => {
  let card: RateCard;
  beforeAll(async () => {
    card = await loadRateCard(DEFAULT_RATE_CARD_URL);
  });

  it('claims before it looks up, and looks up only the events claimed fresh', async () => {
    const steps: string[] = [];
    const asked: string[][] = [];
    const claims = memoryClaims(steps);
    const [a, b] = [record(), record()];
    claims.held.set(keyOf(b), 'earlier-batch');
    const decided = await usageRows({ ch: storedIds(new Set(), steps, asked), card, claims }, [group([a, b], 't1')]);
    expect(steps).toEqual(['claim t1', 'lookup']);
    expect(asked).toEqual([[keyOf(a)]]);
    // b is held by a batch in flight: that batch stores it.
    expect(decided.rows.map(({ row }) => row.id)).toEqual([a.event_id]);
    expect(decided.claimed).toEqual([{ token: 't1', keys: [keyOf(a)] }]);
  });

  it('leaves out a copy whose first was stored and released by an earlier round', async () => {
    const steps: string[] = [];
    const claims = memoryClaims(steps);
    const first = record();
    const stored = new Set<string>();
    const ch = storedIds(stored, steps, []);
    const round1 = await usageRows({ ch, card, claims }, [group([first], 't1')]);
    expect(round1.rows).toHaveLength(1);
    stored.add(keyOf(first));
    for (const { token, keys } of round1.claimed) await claims.release(keys, token);
    expect(claims.held.size).toBe(0);
    const retry = { ...first };
    const round2 = await usageRows({ ch, card, claims }, [group([retry], 't2')]);
    expect(round2.rows).toEqual([]);
  });

  it('stores a replay of an unreleased round again whole, its own stored events included', async () => {
    const steps: string[] = [];
    const claims = memoryClaims(steps);
    const [a, b] = [record(), record()];
    const stored = new Set<string>();
    const places = new Map<string, RecordSource[]>();
    const ch = storedIds(stored, steps, [], places);
    await usageRows({ ch, card, claims }, [group([a, b], 't1')]);
    // The first try stored a in some tables and failed: the replay (same token) must insert the same rows.
    stored.add(keyOf(a));
    places.set(keyOf(a), [{ partition: 0, offset: '0' }]);
    const replay = await usageRows({ ch, card, claims }, [group([a, b], 't1')]);
    expect(replay.rows.map(({ row }) => row.id).sort()).toEqual([a.event_id, b.event_id].sort());
  });

  it('leaves out the stored events of a batch that may be stored under another token, even those it claimed', async () => {
    const steps: string[] = [];
    const claims = memoryClaims(steps);
    const [a, b] = [record(), record()];
    const stored = new Set([keyOf(a)]);
    claims.held.set(keyOf(a), 't1');
    const decided = await usageRows({ ch: storedIds(stored, steps, []), card, claims }, [group([a, b], 't1', true)]);
    expect(decided.rows.map(({ row }) => row.id)).toEqual([b.event_id]);
  });

  it('keeps an id once across the batches of a round, and another tenant’s same id apart', async () => {
    const steps: string[] = [];
    const claims = memoryClaims(steps);
    const shared = randomUUID();
    const decided = await usageRows({ ch: storedIds(new Set(), steps, []), card, claims }, [
      group([record(shared), record(shared)], 't1'),
      group([record(shared), record(shared, 'tenant-b')], 't2'),
    ]);
    expect(decided.rows.map(({ row }) => `${row.user_id}/${row.id}`).sort()).toEqual(
      [`tenant-a/${shared}`, `tenant-b/${shared}`].sort(),
    );
  });

  it('asks a replay where the events it claimed on an earlier try are stored, and nothing else', async () => {
    const steps: string[] = [];
    const asked: string[][] = [];
    const claims = memoryClaims(steps);
    const a = record();
    claims.held.set(keyOf(a), 't1');
    const places = new Map([[keyOf(a), [{ partition: 0, offset: '0' }]]]);
    const decided = await usageRows({ ch: storedIds(new Set([keyOf(a)]), steps, asked, places), card, claims }, [
      group([a], 't1'),
    ]);
    expect(steps).toEqual(['claim t1', 'where']);
    expect(asked).toEqual([[keyOf(a)]]);
    // Stored from this very message: the earlier try's own insert, which the replay repeats.
    expect(decided.rows.map(({ row }) => row.id)).toEqual([a.event_id]);
  });

  it('leaves out a copy stored from another message when an earlier try died holding its claim', async () => {
    const steps: string[] = [];
    const claims = memoryClaims(steps);
    const [a, b] = [record(), record()];
    // The earlier try claimed both, found a's first copy (partition 0, offset 40) stored, and was killed
    // before it let a's claim go: the claim alone does not say that it kept a.
    claims.held.set(keyOf(a), 't2');
    claims.held.set(keyOf(b), 't2');
    const places = new Map([[keyOf(a), [{ partition: 0, offset: '40' }]]]);
    const replay = await usageRows({ ch: storedIds(new Set([keyOf(a)]), steps, [], places), card, claims }, [
      group([a, b], 't2'),
    ]);
    expect(replay.rows.map(({ row }) => row.id)).toEqual([b.event_id]);
    expect(replay.claimed).toEqual([{ token: 't2', keys: [keyOf(b)] }]);
    expect([...claims.held.keys()]).toEqual([keyOf(b)]);
  });

  it('lets go at once of a claim on an event it found stored, so that the next try looks it up again', async () => {
    const steps: string[] = [];
    const claims = memoryClaims(steps);
    const [a, b] = [record(), record()];
    const ch = storedIds(new Set([keyOf(a)]), steps, []);
    const first = await usageRows({ ch, card, claims }, [group([a, b], 't2')]);
    expect(first.rows.map(({ row }) => row.id)).toEqual([b.event_id]);
    expect([...claims.held.keys()]).toEqual([keyOf(b)]);
    // The insert failed; the retry of the same batch drops the stored copy again.
    const retry = await usageRows({ ch, card, claims }, [group([a, b], 't2')]);
    expect(retry.rows.map(({ row }) => row.id)).toEqual([b.event_id]);
    expect(retry.claimed).toEqual([{ token: 't2', keys: [keyOf(b)] }]);
  });
});

describe('usage rows of corrections', () => {
  let card: RateCard;
  beforeAll(async () => {
    card = await loadRateCard(DEFAULT_RATE_CARD_URL);
  });

  /** A correction of `of` whose reversal negates `reverses`: its reversal, and for an amend its replacement. */
  function correction(of: UsageRecord, reverses: string, kind: 'void' | 'amend'): UsageRecord[] {
    const id = randomUUID();
    const common = { id, kind, of: of.event_id, reason: 'test', created_at: new Date().toISOString() };
    const reversed = {
      service: 'tts',
      quantity: '100',
      unit: 'character',
      unit_cost: '0.00004',
      cost: '0.004',
      cost_source: 'computed' as const,
      rate_id: 'tts-resemble',
      currency: 'USD',
      price_scope: 'card',
      components: [],
    };
    const reversal = { ...of, event_id: id, correction: { ...common, reverses, reversed } } as UsageRecord;
    if (kind === 'void') return [reversal];
    return [reversal, { ...of, event_id: randomUUID(), quantity: '50', correction: common } as UsageRecord];
  }

  it('stores a reversal at the reversed row’s stored price negated, weighing -1, and the replacement priced', async () => {
    const sent = record();
    const [reversal, replacement] = correction(sent, sent.event_id, 'amend');
    const { rows } = await usageRows({ ch: fakeClickHouse().ch, card, claims: null }, [
      group([reversal!, replacement!], 'round-1'),
    ]);
    expect(rows.map(({ row }) => [row.weight, row.cost, row.quantity, row.reverses, row.correction_kind])).toEqual([
      [-1, '-0.004', '-100', sent.event_id, 'amend'],
      [1, rows[1]!.row.cost, '50', null, 'amend'],
    ]);
    expect(rows[1]!.row.cost).not.toBe('0');
  });

  it('leaves out whole a correction whose row another reversal of the round or a stored one negates already', async () => {
    const sent = record();
    const first = correction(sent, sent.event_id, 'amend');
    const second = correction(sent, sent.event_id, 'void');
    const steps: string[] = [];
    const { rows } = await usageRows({ ch: fakeClickHouse({ steps }).ch, card, claims: null }, [
      group([...first, ...second], 'round-1'),
    ]);
    expect(rows.map(({ row }) => row.id)).toEqual(first.map((r) => r.event_id));
    expect(steps).toContain('reversals');

    const late = correction(sent, sent.event_id, 'amend');
    const storedBefore = new Map([[keyOf(sent), [first[0]!.event_id]]]);
    const again = await usageRows({ ch: fakeClickHouse({ reversals: storedBefore }).ch, card, claims: null }, [
      group(late, 'round-2'),
    ]);
    expect(again.rows).toEqual([]);
  });

  it('keeps a reversal whose stored reversal is itself: the replay of its own insert', async () => {
    const sent = record();
    const voided = correction(sent, sent.event_id, 'void');
    const itself = new Map([[keyOf(sent), [voided[0]!.event_id]]]);
    const { rows } = await usageRows({ ch: fakeClickHouse({ reversals: itself }).ch, card, claims: null }, [
      group(voided, 'round-1'),
    ]);
    expect(rows.map(({ row }) => row.id)).toEqual([voided[0]!.event_id]);
  });
});

describe('usage rows without claims (the embedded journal)', () => {
  let card: RateCard;
  beforeAll(async () => {
    card = await loadRateCard(DEFAULT_RATE_CARD_URL);
  });

  it('keeps an event the id index names that usage_events does not hold, asking usage_events only for those', async () => {
    const [uncommitted, held, unknown] = [record(), record(), record()];
    const steps: string[] = [];
    const asked: string[][] = [];
    const ch = fakeClickHouse({
      stored: new Set([keyOf(uncommitted), keyOf(held)]),
      places: new Map([[keyOf(held), [{ partition: 0, offset: '9' }]]]),
      steps,
      asked,
    }).ch;
    const { rows } = await usageRows({ ch, card, claims: null }, [group([uncommitted, held, unknown], 'round-1')]);
    expect(rows.map(({ row }) => row.id)).toEqual([uncommitted.event_id, unknown.event_id]);
    expect(steps).toEqual(['lookup', 'where']);
    expect(asked).toEqual([
      [keyOf(uncommitted), keyOf(held), keyOf(unknown)],
      [keyOf(uncommitted), keyOf(held)],
    ]);
  });

  it('asks usage_events nothing when the index names none, nor for a batch replayed after the views were rebuilt', async () => {
    const steps: string[] = [];
    const [named, fresh] = [record(), record()];
    const ch = fakeClickHouse({ stored: new Set([keyOf(named)]), steps }).ch;
    const { rows } = await usageRows({ ch, card, claims: null }, [
      group([named], 'round-1', true),
      group([fresh], 'round-1'),
    ]);
    expect(rows.map(({ row }) => row.id)).toEqual([fresh.event_id]);
    expect(steps).toEqual(['lookup']);
  });
});

describe('usage rows that first store their session', () => {
  let card: RateCard;
  beforeAll(async () => {
    card = await loadRateCard(DEFAULT_RATE_CARD_URL);
  });

  it('marks the session of a round looked up as never stored, and not one whose marked row is stored', async () => {
    // The earlier of the new session's rows is the one marked.
    const fresh = [record(), { ...record(), occurred_at: new Date(Date.now() + 1000).toISOString() }];
    const counted = { ...record(), session_id: '00000000-0000-4000-8000-000000000002' };
    const marked = new Map([
      [
        sessionKey(counted.user_id, counted.session_id),
        [{ event_id: randomUUID(), agent_id: '', session_first: true, agent_session_first: true }],
      ],
    ]);
    const { ch } = fakeClickHouse({ marked });
    const decided = await usageRows({ ch, card, claims: null }, [group([...fresh, counted], 't1')]);
    expect(decided.rows.map(({ row }) => [row.id, row.session_first, row.agent_session_first])).toEqual([
      [fresh[0]!.event_id, 1, 1],
      [fresh[1]!.event_id, 0, 0],
      [counted.event_id, 0, 0],
    ]);
  });
});

describe('usage rows of sessions found counted before', () => {
  let card: RateCard;
  beforeAll(async () => {
    card = await loadRateCard(DEFAULT_RATE_CARD_URL);
  });

  it('asks for the marks of a session until a lookup finds it marked, then no more', async () => {
    const askedSessions: string[][] = [];
    const session = record().session_id;
    const key = sessionKey('tenant-a', session);
    const stored = new Map<string, SessionMark[]>();
    const { ch } = fakeClickHouse({ marked: stored, askedSessions });
    const counted = new CountedSessions(100);
    const decide = (token: string) => usageRows({ ch, card, claims: null, counted }, [group([record()], token)]);
    const first = await decide('t1');
    expect(first.rows.map(({ row }) => row.session_first)).toEqual([1]);
    // The round is stored: its mark is in the table, which the next lookup reads.
    stored.set(key, [
      { event_id: first.rows[0]!.row.id, agent_id: '', session_first: true, agent_session_first: true },
    ]);
    const second = await decide('t2');
    const third = await decide('t3');
    expect([second, third].map((decided) => decided.rows.map(({ row }) => row.session_first))).toEqual([[0], [0]]);
    expect(askedSessions).toEqual([[key], [key]]);
  });
});
