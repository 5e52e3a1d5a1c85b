import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RateRepriceBody } from '../../../schemas/http/rates.ts';
import type { RateCard } from '../../../schemas/rate-card.ts';
import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import { tableName } from '../../shared/clickhouse/tables.ts';
import { readClosedPeriods } from '../../shared/clickhouse/tables/billing-periods.ts';
import { DEFAULT_BILLING_TIME_ZONE, readTenantSettings } from '../../shared/clickhouse/tables/tenant-settings.ts';
import { monthBounds } from '../../shared/validation/billing-period.ts';
import { AppError, type ValidationItem } from '../../shared/errors.ts';
import { Exact } from '../../shared/exact-decimal.ts';
import { assertActsFor } from '../../shared/auth/tenant.ts';
import { priceUsage, type Catalogs, type PricedUsage } from '../../domain/pricing/index.ts';
import type { RecordSink, UsageRecord } from '../../domain/records/index.ts';
import { guardKey, type CorrectionGuard, type GuardedEvent } from '../usage/correction-guard.ts';
import {
  FAMILY_ROW_COLUMNS,
  correctionEnvelopes,
  familyRowOf,
  reversalOf,
  sentRecordOf,
  type Correction,
  type FamilyRow,
} from '../usage/usage-corrections.ts';

/** The longest range one repricing reads, as an export's. */
const MAX_RANGE_MS = 31 * 24 * 3600 * 1000;
/** The most events one repricing considers: a larger range is a 422 asking for a narrower one. */
export const MAX_REPRICED_CANDIDATES = 50_000;
/** Records per publish: a repricing of many events goes out in parts, each durable before the next. */
const PUBLISH_PART = 1_000;
/** How long a repricing waits for earlier corrections of its events to be stored, before a 409. */
const PREVIOUS_STORED_WAIT_MS = 10_000;
/** Ids per lookup of stored corrections (the parameters travel in the URL to a ClickHouse server). */
const LOOKUP_PART = 5_000;

export interface RepriceDeps {
  readonly reads: ClickHouse;
  readonly sink: RecordSink;
  readonly guard: CorrectionGuard;
  /** The card with the tenants' entries, as last refreshed: what prices every new event. */
  readonly card: () => RateCard;
  readonly catalogs: Catalogs;
  readonly now?: () => number;
}

export interface RepriceAnswer {
  readonly dry_run: boolean;
  readonly events: number;
  readonly old_total: string;
  readonly new_total: string;
}

/**
 * POST /api/rates/reprice (docs/corrections.md#repricing): the stored events of a range whose price is
 * missing ("unpriced") and now found, or was superseded by a tenant's price entered after the event was
 * stored and in force at its instant, priced again as corrections: each event's row in force reversed
 * and replaced at the new price, which ingest decides here and the consumer stores as given. A catalog
 * or card change never reprices an event that had a price. Running it again finds nothing new: the
 * replacements are priced as the rates now price them.
 */
export function createRepricing({ reads, sink, guard, card, catalogs, now = Date.now }: RepriceDeps) {
  const usageEvents = tableName(reads, 'usageEvents');
  const rateEntries = tableName(reads, 'rateEntries');

  /** When the newest tenant entry was created (epoch ms), 0 when none: older stored rows may have a newer price. */
  async function newestEntryMs(userId: string | null): Promise<number> {
    const result = await reads.client.query({
      query: `SELECT toString(toUnixTimestamp64Milli(max(created_at))) AS newest, count() AS entries FROM ${rateEntries}
        ${userId === null ? '' : 'WHERE user_id = {user:String}'}`,
      query_params: userId === null ? {} : { user: userId },
      format: 'JSONEachRow',
    });
    const [row] = await result.json<{ newest: string; entries: string }>();
    return Number(row?.entries ?? 0) === 0 ? 0 : Number(row!.newest);
  }

  /** The rows in force of the range that may take another price: unpriced, or stored before the newest tenant entry. */
  async function candidates(body: RateRepriceBody, userId: string | null, newestMs: number): Promise<FamilyRow[]> {
    // A closed month never changes: its events keep their price.
    const [closedMonths, settings] = await Promise.all([
      readClosedPeriods(reads, userId),
      readTenantSettings(reads, userId),
    ]);
    const zones = new Map(settings.map((entry) => [entry.user_id, entry.time_zone]));
    const closed = closedMonths.map((entry) => ({
      user_id: entry.user_id,
      ...monthBounds(entry.period, zones.get(entry.user_id) ?? DEFAULT_BILLING_TIME_ZONE),
    }));
    const user = userId === null ? '' : 'user_id = {user:String} AND ';
    const range = `${user}occurred_at >= fromUnixTimestamp64Milli(toInt64({from:Int64}), 'UTC') AND occurred_at < fromUnixTimestamp64Milli(toInt64({to:Int64}), 'UTC')`;
    const filters = [
      body.provider === undefined ? '' : ' AND provider = {provider:String}',
      body.model === undefined ? '' : ' AND model = {model:String}',
      body.event_type === undefined ? '' : ' AND event_type = {event_type:String}',
    ].join('');
    const result = await reads.client.query({
      query: `SELECT ${FAMILY_ROW_COLUMNS} FROM ${usageEvents}
        WHERE ${range} AND weight = 1${filters}
          AND (cost_source = 'unpriced' OR stored_at < fromUnixTimestamp64Milli(toInt64({newest:Int64}), 'UTC'))
          AND NOT arrayExists((u, s, e) -> u = user_id AND toUnixTimestamp64Milli(occurred_at) >= s
            AND toUnixTimestamp64Milli(occurred_at) < e,
            {closed_users:Array(String)}, {closed_start:Array(Int64)}, {closed_end:Array(Int64)})
          AND (user_id, id) NOT IN (SELECT user_id, assumeNotNull(reverses) FROM ${usageEvents} WHERE ${range} AND weight = -1)
          AND (user_id, ifNull(correction_of, id)) NOT IN
            (SELECT user_id, assumeNotNull(correction_of) FROM ${usageEvents} WHERE ${range} AND correction_kind = 'void')
        ORDER BY user_id, occurred_at, id
        LIMIT {limit:UInt32}`,
      query_params: {
        ...(userId === null ? {} : { user: userId }),
        from: body.from.getTime(),
        to: body.to.getTime(),
        newest: newestMs,
        closed_users: closed.map((entry) => entry.user_id),
        closed_start: closed.map((entry) => entry.start),
        closed_end: closed.map((entry) => entry.end),
        limit: MAX_REPRICED_CANDIDATES + 1,
        ...(body.provider === undefined ? {} : { provider: body.provider.toLowerCase() }),
        ...(body.model === undefined ? {} : { model: body.model }),
        ...(body.event_type === undefined ? {} : { event_type: body.event_type }),
      },
      format: 'JSONEachRow',
    });
    return (await result.json<Record<string, unknown>>()).map(familyRowOf);
  }

  /** When each of these tenant entries was created (epoch ms). */
  async function entriesCreated(ids: readonly string[]): Promise<Map<string, number>> {
    if (ids.length === 0) return new Map();
    const result = await reads.client.query({
      query: `SELECT id AS entry, toString(toUnixTimestamp64Milli(min(created_at))) AS created FROM ${rateEntries}
        WHERE id IN {ids:Array(String)} GROUP BY id`,
      query_params: { ids },
      format: 'JSONEachRow',
    });
    return new Map(
      (await result.json<{ entry: string; created: string }>()).map((row) => [row.entry, Number(row.created)]),
    );
  }

  /**
   * Waits until every correction published last for these events is stored (each event's reversal row
   * bears its correction's id), so that the rows read next are the ones in force; a 409 after 10 s.
   */
  async function previousStored(events: readonly GuardedEvent[]): Promise<void> {
    const waiting = new Set((await guard.previous(events)).values());
    const deadline = now() + PREVIOUS_STORED_WAIT_MS;
    while (waiting.size > 0) {
      for (const part of chunks([...waiting], LOOKUP_PART)) {
        const result = await reads.client.query({
          query: `SELECT toString(id) AS stored FROM ${usageEvents} WHERE id IN {ids:Array(UUID)}`,
          query_params: { ids: part },
          format: 'JSONEachRow',
        });
        for (const { stored } of await result.json<{ stored: string }>()) waiting.delete(stored);
      }
      if (waiting.size === 0) return;
      if (now() >= deadline)
        throw AppError.of(
          'CONFLICT',
          'An earlier correction of these events is not stored yet: retry in a few seconds',
          {
            headers: { 'Retry-After': '2' },
          },
        );
      await sleep(100);
    }
  }

  /** The rows of the range that take a new price, each with it. */
  async function repriceable(body: RateRepriceBody, userId: string | null) {
    const rows = await candidates(body, userId, await newestEntryMs(userId));
    if (rows.length > MAX_REPRICED_CANDIDATES)
      throw AppError.validation([
        {
          type: 'value_error',
          loc: ['body', 'to'],
          msg: `Value error, more than ${MAX_REPRICED_CANDIDATES} events may take another price in this range: narrow from and to, or name user_id, provider, model or event_type`,
          input: body.to.toISOString(),
          ctx: { error: {} },
        },
      ]);
    const rates = card();
    const priced = rows.map((row) => ({
      row,
      price: priceUsage(
        rates,
        { ...sentRecordOf(row, row.id, row.occurred_at), occurred_at: new Date(row.occurred_at) },
        catalogs,
      ),
    }));
    const created = await entriesCreated([
      ...new Set(priced.flatMap(({ price }) => (price.scope === 'tenant' ? price.rate_id.split(',') : []))),
    ]);
    return priced.filter(({ row, price }) => takesNewPrice(row, price, created));
  }

  const eventOf = (row: FamilyRow): GuardedEvent => ({ userId: row.user_id, eventId: row.correction_of ?? row.id });

  return {
    async reprice(body: RateRepriceBody, tenant: string | null): Promise<RepriceAnswer> {
      const problems = rangeProblems(body);
      if (problems.length > 0) throw AppError.validation(problems);
      if (body.user_id !== undefined) assertActsFor(tenant, body.user_id, 'reprice');
      const userId = tenant ?? body.user_id ?? null;
      const found = await repriceable(body, userId);
      const answer = (repriced: typeof found) => ({
        dry_run: body.dry_run ?? false,
        events: repriced.length,
        old_total: total(repriced.map(({ row }) => row.cost)),
        new_total: total(repriced.map(({ price }) => price.cost)),
      });
      if (body.dry_run || found.length === 0) return answer(found);
      // Held, the events take no other correction; once an earlier one of theirs is stored, they are read
      // again: what is in force then is what is reversed (an event corrected meanwhile is left to the next run).
      const events = found.map(({ row }) => eventOf(row));
      return guard.holdAll(events, async () => {
        await previousStored(events);
        const held = new Set(events.map(guardKey));
        const repriced = (await repriceable(body, userId)).filter(({ row }) => held.has(guardKey(eventOf(row))));
        const createdAt = new Date(now()).toISOString();
        const corrections = repriced.map(({ row, price }) => ({ row, records: correctionOf(row, price, createdAt) }));
        const records = corrections.flatMap((correction) => correction.records);
        for (const part of chunks(records, PUBLISH_PART)) await sink.publish(correctionEnvelopes(part, createdAt));
        // The records are durable: a mark Redis refuses leaves a later correction to the consumer's once-only reversal.
        await guard
          .published(
            corrections.map(({ row, records: [reversal] }) => ({ ...eventOf(row), correctionId: reversal!.event_id })),
          )
          .catch(() => undefined);
        return answer(repriced);
      });
    },
  };
}

const total = (values: readonly string[]) => values.reduce((sum, value) => sum.plus(value), new Exact(0)).toFixed();

function chunks<T>(items: readonly T[], size: number): T[][] {
  const parts: T[][] = [];
  for (let start = 0; start < items.length; start += size) parts.push(items.slice(start, start + size));
  return parts;
}

export type Repricing = ReturnType<typeof createRepricing>;

function rangeProblems({ from, to }: RateRepriceBody): ValidationItem[] {
  const problem = (msg: string): ValidationItem => ({
    type: 'value_error',
    loc: ['body', 'to'],
    msg: `Value error, ${msg}`,
    input: to.toISOString(),
    ctx: { error: {} },
  });
  if (to.getTime() <= from.getTime()) return [problem('to must be after from')];
  if (to.getTime() - from.getTime() > MAX_RANGE_MS) return [problem('to is more than 31 days after from')];
  return [];
}

/**
 * Whether a row in force takes the price the rates give it now: an unpriced row that is priced now, or
 * a row whose price changed because a tenant's entry created after the row was stored prices it.
 */
function takesNewPrice(row: FamilyRow, price: PricedUsage, created: ReadonlyMap<string, number>): boolean {
  if (row.cost_source === 'unpriced') return price.cost_source !== 'unpriced';
  const same =
    new Exact(row.cost).equals(price.cost) && row.cost_source === price.cost_source && row.rate_id === price.rate_id;
  if (same || price.scope !== 'tenant') return false;
  return price.rate_id.split(',').some((id) => (created.get(id) ?? 0) > row.stored_ms);
}

/** The repricing of one row in force: its reversal, and its replacement at the new price. */
function correctionOf(row: FamilyRow, price: PricedUsage, createdAt: string): UsageRecord[] {
  const correction: Correction = {
    id: randomUUID(),
    kind: 'reprice',
    of: row.correction_of ?? row.id,
    reason: row.cost_source === 'unpriced' ? `priced: was unpriced (${price.rate_id})` : `repriced by ${price.rate_id}`,
    created_at: createdAt,
  };
  return [
    reversalOf(row, correction),
    {
      ...sentRecordOf(row, randomUUID(), createdAt),
      correction: {
        ...correction,
        price: {
          service: price.service,
          quantity: price.quantity,
          unit: price.unit,
          unit_cost: price.unit_cost,
          cost: price.cost,
          cost_source: price.cost_source,
          rate_id: price.rate_id,
          currency: price.currency,
          price_scope: price.scope ?? '',
          components: [...price.components],
        },
      },
    },
  ];
}
