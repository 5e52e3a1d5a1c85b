import type { UsageEventType } from '../../../../schemas/http/usage-event.ts';
import { TOKEN_KINDS } from '../../../../schemas/pricing-terms.ts';
import type { UsageRecord } from '../../../domain/records/index.ts';
import type { PricedUsage } from '../../../domain/pricing/index.ts';
import type { ClickHouse } from '../client.ts';
import { tableName } from '../tables.ts';
import { chunkBySize } from '../../chunk-by-size.ts';

/**
 * usage_events and usage_event_ids_by_user (its id index). The rollups the cost queries read are the
 * query service's (services/query/queries/), fed by the views of migrations 003-016 (015 adds columns only).
 */

/** Where a record came from: its Kafka partition and offset, or -1 in the embedded mode (the journal). */
export interface RecordSource {
  readonly partition: number;
  readonly offset: string;
}

/** One usage_events row, as inserted (JSONEachRow): the record, its price and its source. */
export interface UsageEventRow {
  readonly id: string;
  readonly user_id: string;
  readonly agent_id: string;
  readonly session_id: string;
  readonly provider: string;
  readonly service: string;
  readonly event_type: UsageEventType;
  readonly model: string;
  readonly quantity: string;
  readonly unit: string;
  readonly unit_cost: string;
  readonly cost: string;
  readonly reported_unit_cost: string | null;
  readonly reported_total_cost: string | null;
  readonly cost_source: PricedUsage['cost_source'];
  readonly rate_id: string;
  readonly currency: string;
  readonly needs_reconciliation: boolean;
  /** Token counts as decimal strings (UInt64 beyond a JS number). */
  readonly input_tokens: string | null;
  readonly output_tokens: string | null;
  readonly cached_input_tokens: string | null;
  readonly cache_write_tokens: string | null;
  readonly audio_input_tokens: string | null;
  readonly cached_audio_input_tokens: string | null;
  readonly image_input_tokens: string | null;
  readonly cached_image_input_tokens: string | null;
  readonly audio_output_tokens: string | null;
  readonly reasoning_tokens: string | null;
  /** A realtime model's connected seconds, a decimal string. */
  readonly session_duration_seconds: string | null;
  readonly price_scope: string;
  readonly cost_components: PricedUsage['components'];
  readonly occurred_at: string;
  readonly received_at: string;
  readonly kafka_partition: number;
  readonly kafka_offset: string;
  /** -1 on a correction's reversal, else 1 (migration 016): every event count sums it. */
  readonly weight: 1 | -1;
  readonly correction_id: string | null;
  readonly correction_kind: '' | NonNullable<UsageRecord['correction']>['kind'];
  readonly correction_of: string | null;
  readonly reverses: string | null;
  readonly correction_reason: string;
  readonly correction_created_at: string | null;
  /** 1 on the one row that first stored its session (migration 021, `markSessionFirsts`), else 0. */
  readonly session_first: 0 | 1;
  /** 1 on the one row that first stored its session under its agent_id, else 0. */
  readonly agent_session_first: 0 | 1;
}

export function usageEventRow(record: UsageRecord, priced: PricedUsage, source: RecordSource): UsageEventRow {
  return {
    id: record.event_id,
    user_id: record.user_id,
    agent_id: record.agent_id ?? '',
    session_id: record.session_id,
    provider: record.provider,
    service: priced.service,
    // The record's is one the usage body allows: ingest writes no other (its schema keeps it a string).
    event_type: record.event_type as UsageEventType,
    model: record.model ?? '',
    quantity: priced.quantity,
    unit: priced.unit,
    unit_cost: priced.unit_cost,
    cost: priced.cost,
    reported_unit_cost: record.reported_unit_cost,
    reported_total_cost: record.reported_total_cost,
    cost_source: priced.cost_source,
    rate_id: priced.rate_id,
    currency: priced.currency,
    needs_reconciliation: priced.reconcile,
    input_tokens: record.input_tokens,
    output_tokens: record.output_tokens,
    cached_input_tokens: record.cached_input_tokens ?? null,
    cache_write_tokens: record.cache_write_tokens ?? null,
    audio_input_tokens: record.audio_input_tokens ?? null,
    cached_audio_input_tokens: record.cached_audio_input_tokens ?? null,
    image_input_tokens: record.image_input_tokens ?? null,
    cached_image_input_tokens: record.cached_image_input_tokens ?? null,
    audio_output_tokens: record.audio_output_tokens ?? null,
    reasoning_tokens: record.reasoning_tokens ?? null,
    session_duration_seconds: record.session_duration_seconds ?? null,
    price_scope: priced.scope ?? '',
    cost_components: priced.components,
    occurred_at: record.occurred_at,
    received_at: record.received_at,
    kafka_partition: source.partition,
    kafka_offset: source.offset,
    weight: 1,
    ...correctionColumns(record),
    session_first: 0,
    agent_session_first: 0,
  };
}

/** A row's price as a record carries it (a correction's `reversed` or `price`). */
type StoredPrice = NonNullable<NonNullable<UsageRecord['correction']>['reversed']>;

/** The price a row stores, from the stored columns a correction carries: as given, or negated (`sign` -1). */
function storedPrice(price: StoredPrice, sign: 1 | -1): PricedUsage {
  const signed = (value: string) => (sign === 1 ? value : negated(value));
  return {
    quantity: signed(price.quantity),
    cost: signed(price.cost),
    unit_cost: price.unit_cost,
    unit: price.unit,
    service: price.service,
    cost_source: price.cost_source,
    rate_id: price.rate_id,
    currency: price.currency,
    reconcile: false,
    components: price.components.map((part) => ({
      ...part,
      dimension: part.dimension as PricedUsage['components'][number]['dimension'],
      quantity: signed(part.quantity),
      cost: signed(part.cost),
    })),
    scope: (price.price_scope === '' ? null : price.price_scope) as PricedUsage['scope'],
  };
}

/**
 * The row of a correction whose price ingest decided, or null when the record leaves pricing to the
 * consumer: a reversal is the reversed row's price as it was stored, negated (cost, quantity, reported
 * total and every priced part), weighing -1, its token counts empty (the columns hold no negative
 * count: the negated parts carry them); a repricing's replacement is stored at the price it carries.
 */
export function correctionRow(record: UsageRecord, source: RecordSource): UsageEventRow | null {
  const correction = record.correction;
  if (correction?.reversed !== undefined) {
    const tokensless = Object.fromEntries(TOKEN_COLUMNS.map((column) => [column, null]));
    return {
      ...usageEventRow(record, storedPrice(correction.reversed, -1), source),
      ...tokensless,
      reported_total_cost: record.reported_total_cost === null ? null : negated(record.reported_total_cost),
      weight: -1,
    };
  }
  if (correction?.price !== undefined) return usageEventRow(record, storedPrice(correction.price, 1), source);
  return null;
}

/** The counts a reversal leaves empty: every token kind, and a realtime model's connected seconds. */
const TOKEN_COLUMNS = [...TOKEN_KINDS, 'session_duration_seconds'] as const satisfies readonly (keyof UsageEventRow)[];

/** A decimal string's negation, zero kept as it is. */
function negated(value: string): string {
  if (/^0(\.0*)?$/.test(value)) return value;
  return value.startsWith('-') ? value.slice(1) : `-${value}`;
}

function correctionColumns(record: UsageRecord) {
  const correction = record.correction;
  return {
    correction_id: correction?.id ?? null,
    correction_kind: correction?.kind ?? '',
    correction_of: correction?.of ?? null,
    reverses: correction?.reverses ?? null,
    correction_reason: correction?.reason ?? '',
    correction_created_at: correction?.created_at ?? null,
  } as const;
}

/**
 * What an event_id deduplicates within: its tenant. One string per (user_id, event_id), used as the
 * Redis claim's key suffix and to match stored ids; the event id (a UUID, fixed length, no colon)
 * comes first, so no two pairs give the same string whatever the user_id holds.
 */
export function eventKey(userId: string, eventId: string): string {
  return `${eventId}:${userId}`;
}

export interface EventRef {
  readonly user_id: string;
  readonly event_id: string;
}

/**
 * Which of these events are stored already, by tenant and id, from usage_event_ids_by_user (ordered
 * by (user_id, id): a primary-key search, whatever the number of events). The aliases differ from
 * the columns: ClickHouse resolves WHERE to a SELECT alias first, and `toString(id) AS id` would make
 * the filter a string compare that no index serves.
 */
export function storedEventIdsQuery(ch: ClickHouse): string {
  return `SELECT DISTINCT user_id AS stored_user, toString(id) AS stored_id FROM ${tableName(ch, 'usageEventIds')}
    WHERE (user_id, id) IN (SELECT arrayJoin(arrayZip({users:Array(String)}, {ids:Array(UUID)})))`;
}

/**
 * What one lookup's parameters may take, in characters of ids (URL-encoded, a little more): the
 * parameters travel in the URL, and a server refuses a URL past http_max_uri_size (1 MiB by default).
 * A round of usage spans every partition a consumer holds, thousands of events.
 */
export const STORED_LOOKUP_CHARS = 512 * 1024;

/**
 * The eventKey of every event of `refs` that is stored: the consumer's deduplication and the live
 * cost's union both ask this. Asked in parts of at most STORED_LOOKUP_CHARS, one after another.
 */
export async function storedEventKeys(ch: ClickHouse, refs: readonly EventRef[]): Promise<Set<string>> {
  const stored = new Set<string>();
  for (const part of lookupParts(refs)) {
    const result = await ch.client.query({
      query: storedEventIdsQuery(ch),
      query_params: { users: part.map((ref) => ref.user_id), ids: part.map((ref) => ref.event_id) },
      format: 'JSONEachRow',
    });
    for (const row of await result.json<{ stored_user: string; stored_id: string }>())
      stored.add(eventKey(row.stored_user, row.stored_id));
  }
  return stored;
}

/**
 * Where each of these events is stored: the source (partition and offset) of every usage_events row
 * holding it, by eventKey. Read from usage_events itself (the id index holds no source), by tenant (its
 * order's first column) and id (its bloom filter index), at whatever instant each row holds: a client's
 * copy sent without a timestamp took the instant it reached ingest, not the first copy's. A consumer asks
 * it only for the events a replayed batch claimed before, to tell its own earlier insert from another
 * copy's, which is rare (a crash between a claim and its round's release).
 */
export async function storedEventPlaces(
  ch: ClickHouse,
  refs: readonly EventRef[],
): Promise<Map<string, RecordSource[]>> {
  const places = new Map<string, RecordSource[]>();
  for (const part of lookupParts(refs)) {
    const result = await ch.client.query({
      query: `SELECT user_id AS stored_user, toString(id) AS stored_id, kafka_partition AS partition,
          toString(kafka_offset) AS offset
        FROM ${tableName(ch, 'usageEvents')}
        WHERE user_id IN {users:Array(String)}
          AND (user_id, id) IN (SELECT arrayJoin(arrayZip({users:Array(String)}, {ids:Array(UUID)})))`,
      query_params: {
        users: part.map((ref) => ref.user_id),
        ids: part.map((ref) => ref.event_id),
      },
      format: 'JSONEachRow',
    });
    for (const row of await result.json<{
      stored_user: string;
      stored_id: string;
      partition: number;
      offset: string;
    }>()) {
      const key = eventKey(row.stored_user, row.stored_id);
      places.set(key, [...(places.get(key) ?? []), { partition: row.partition, offset: row.offset }]);
    }
  }
  return places;
}

/** `refs` cut into parts whose ids, URL-encoded with their quotes and commas, fit STORED_LOOKUP_CHARS. */
export function lookupParts<R extends EventRef>(refs: readonly R[]): R[][] {
  // Each value as its URL-encoded text, and 12 characters for its quotes and comma (%27 %27 %2C),
  // an escaping backslash or two: 2,000 characters per event for a tenant id of 512 odd characters.
  const size = (ref: EventRef) => encodeURIComponent(ref.user_id).length + encodeURIComponent(ref.event_id).length + 24;
  return chunkBySize(refs, size, STORED_LOOKUP_CHARS);
}

/** A correction's reversal as the consumer decides it: its tenant, instant, own id and the row it negates. */
export interface ReversalRef {
  readonly user_id: string;
  readonly occurred_at: string;
  readonly event_id: string;
  readonly reverses: string;
}

/**
 * The rows among `refs`' targets that a stored reversal negates already, each with that reversal's id,
 * keyed by eventKey(user, reversed row). A reversal shares its target's tenant and instant, so the
 * lookup reads the primary key of usage_events at those instants only. Corrections are rare: one
 * statement per round that holds any.
 */
export async function storedReversals(ch: ClickHouse, refs: readonly ReversalRef[]): Promise<Map<string, string[]>> {
  const found = new Map<string, string[]>();
  if (refs.length === 0) return found;
  const result = await ch.client.query({
    query: `SELECT user_id AS stored_user, toString(reverses) AS reversed, toString(id) AS reversal
      FROM ${tableName(ch, 'usageEvents')}
      WHERE (user_id, occurred_at) IN (SELECT arrayJoin(arrayZip({users:Array(String)}, {instants:Array(DateTime64(3, 'UTC'))})))
        AND weight = -1 AND reverses IN {targets:Array(UUID)}`,
    query_params: {
      users: refs.map((ref) => ref.user_id),
      instants: refs.map((ref) => ref.occurred_at.replace('T', ' ').replace('Z', '')),
      targets: refs.map((ref) => ref.reverses),
    },
    format: 'JSONEachRow',
  });
  for (const { stored_user, reversed, reversal } of await result.json<{
    stored_user: string;
    reversed: string;
    reversal: string;
  }>()) {
    const key = eventKey(stored_user, reversed);
    found.set(key, [...(found.get(key) ?? []), reversal]);
  }
  return found;
}

export interface SessionRef {
  readonly user_id: string;
  readonly session_id: string;
}

/** A session's key within its tenant, as eventKey is an event's. */
export function sessionKey(userId: string, sessionId: string): string {
  return `${sessionId}:${userId}`;
}

/** A row of usage_session_firsts: a row of the session that marks it, or it under its agent, as counted. */
export interface SessionMark {
  readonly event_id: string;
  readonly agent_id: string;
  readonly session_first: boolean;
  readonly agent_session_first: boolean;
}

/**
 * The marked rows of these sessions (migration 021; none for a session never stored), by sessionKey,
 * from usage_session_firsts (ordered by (user_id, session_id): a primary-key search). Asked in parts as
 * storedEventKeys is.
 */
export async function storedSessionMarks(
  ch: ClickHouse,
  refs: readonly SessionRef[],
): Promise<Map<string, SessionMark[]>> {
  const marks = new Map<string, SessionMark[]>();
  const asRefs = refs.map(({ user_id, session_id }) => ({ user_id, event_id: session_id }));
  for (const part of lookupParts(asRefs)) {
    const result = await ch.client.query({
      query: `SELECT user_id AS mark_user, toString(session_id) AS mark_session, toString(event_id) AS mark_event,
          agent_id AS mark_agent, session_first AS mark_session_first, agent_session_first AS mark_agent_first
        FROM ${tableName(ch, 'usageSessionFirsts')}
        WHERE (user_id, session_id) IN (SELECT arrayJoin(arrayZip({users:Array(String)}, {sessions:Array(UUID)})))`,
      query_params: { users: part.map((ref) => ref.user_id), sessions: part.map((ref) => ref.event_id) },
      format: 'JSONEachRow',
    });
    for (const row of await result.json<{
      mark_user: string;
      mark_session: string;
      mark_event: string;
      mark_agent: string;
      mark_session_first: number;
      mark_agent_first: number;
    }>()) {
      const key = sessionKey(row.mark_user, row.mark_session);
      const mark = {
        event_id: row.mark_event,
        agent_id: row.mark_agent,
        session_first: Number(row.mark_session_first) === 1,
        agent_session_first: Number(row.mark_agent_first) === 1,
      };
      marks.set(key, [...(marks.get(key) ?? []), mark]);
    }
  }
  return marks;
}
