import { randomUUID } from 'node:crypto';
import type { RateCreateBody } from '../../../schemas/http/rates.ts';
import type { RateCard } from '../../../schemas/rate-card.ts';
import type { RateRecord } from '../../../schemas/records/rate.ts';
import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import { AppError, type ValidationItem } from '../../shared/errors.ts';
import { Exact, MONEY_SCALE } from '../../shared/exact-decimal.ts';
import type { Catalogs } from '../../domain/pricing/index.ts';
import { listRateCardProblems } from '../../domain/pricing/index.ts';
import type { RateListing } from '../../domain/pricing/index.ts';
import { readRateEntry, type StoredRate } from '../../shared/clickhouse/tables/rate-entries.ts';
import { toCardEntry } from '../../domain/pricing/index.ts';
import type { TenantRateIndex } from '../../domain/pricing/index.ts';
import type { RateEntryStore } from './rate-entry-store.ts';
import { makeEnvelope } from '../../domain/records/index.ts';
import { ANONYMOUS, type Caller } from '../../shared/auth/access.ts';
import { auditEnvelope } from '../../shared/auth/audit.ts';
import { assertActsFor } from '../../shared/auth/tenant.ts';
import type { RecordSink } from '../../domain/records/index.ts';
import { LATEST_STORED_MS } from '../../shared/validation/instant-window.ts';
import { monthBounds } from '../../shared/validation/billing-period.ts';
import type { ClosedPeriods } from '../periods/closed-periods.ts';

export interface TenantRateServiceDeps {
  readonly card: () => RateCard;
  readonly catalogs: Catalogs;
  /** Where an entry is read before it is ended: ingest's own copy first, then the store (the highest version wins). */
  readonly entries: RateEntryStore;
  /** The entries as this process last read them from the store: the durable count, should the entry store have lost its own. */
  readonly tenants: TenantRateIndex;
  /** How many entries not yet ended a tenant may hold (RATE_ENTRIES_PER_TENANT). */
  readonly perTenant: number;
  readonly reads: ClickHouse;
  readonly sink: RecordSink;
  /**
   * How far back an effective_from may lie (USAGE_MAX_AGE_DAYS, the oldest usage taken): an entry that
   * starts in the past prices new usage of those instants, and stored usage only once repriced.
   */
  readonly maxAgeMs: number;
  /** The tenants' closed months: an entry may not start in one (its statement never changes); absent: none. */
  readonly closedPeriods?: Pick<ClosedPeriods, 'fresh' | 'freshTimeZone'> | null;
  readonly now?: () => number;
}

/**
 * Tenants' own prices: created from any instant of the usage window on (stored usage is repriced only by
 * POST /api/rates/reprice) and ended now, each change a durable record on the record path (rate_entries),
 * which every pricing process reads within seconds.
 */
export function createTenantRateService({
  card,
  catalogs,
  entries,
  tenants,
  perTenant,
  reads,
  sink,
  maxAgeMs,
  closedPeriods = null,
  now = Date.now,
}: TenantRateServiceDeps) {
  async function publish(record: RateRecord, atMs: number, actor: Caller): Promise<RateListing> {
    const at = new Date(atMs);
    const action = record.version === 1 ? 'rate_created' : 'rate_ended';
    await sink.publish([
      makeEnvelope('rate', `rate:${record.id}`, record, at, at),
      // The same key as the rate: stored in the same batch on the embedded path, in order on Kafka.
      auditEnvelope(
        { action, subject_id: record.id, actor, user_id: record.user_id, at, detail: record },
        `rate:${record.id}`,
      ),
    ]);
    return listing(record, card());
  }

  return {
    /** `actor`: who sets the price (the audit log's actor); one bound to a tenant sets only that tenant's. */
    async create(body: RateCreateBody, actor: Caller = ANONYMOUS): Promise<RateListing> {
      assertActsFor(actor.tenant, body.user_id, 'set prices');
      const nowMs = now();
      const record = toRecord(body, card(), nowMs, maxAgeMs);
      const from = Date.parse(record.effective_from);
      if (from < nowMs && closedPeriods !== null) {
        const timeZone = await closedPeriods.freshTimeZone(body.user_id);
        const closed = (await closedPeriods.fresh(body.user_id)).find(
          ({ period }) => monthBounds(period, timeZone).end > from,
        );
        if (closed !== undefined)
          throw AppError.validation([
            valueError(
              'effective_from',
              `effective_from lies in or before period ${closed.period}, which user ${body.user_id} closed: a closed period never changes`,
              record.effective_from,
            ),
          ]);
      }
      // Kept first: a failed publish leaves a copy that no price reads (a DELETE of it only writes it ended).
      if (
        tenants.countLive(record.user_id, nowMs) >= perTenant ||
        (await entries.admit(record, perTenant, nowMs)) === null
      )
        throw AppError.of(
          'CONFLICT',
          `User ${record.user_id} already has ${perTenant} rate entries in force, the most one user may hold: end one (DELETE /api/rates/{id}) before adding another`,
        );
      try {
        return await publish(record, nowMs, actor);
      } catch (error) {
        await entries.release(record).catch(() => undefined);
        throw error;
      }
    },

    async end(id: string, actor: Caller = ANONYMOUS): Promise<RateListing> {
      const nowMs = now();
      const found = (await entries.find(id)) ?? (await readRateEntry(reads, id)) ?? undefined;
      // Another tenant's entry is, for a bound credential, one that does not exist.
      const stored = found !== undefined && actor.tenant !== null && found.user_id !== actor.tenant ? undefined : found;
      if (stored === undefined) {
        const known =
          card().rates.some((rate) => rate.id === id && rate.user_id === undefined) ||
          catalogs.speech.entries().some((entry) => entry.id === id) ||
          id.startsWith('genai-prices@');
        if (known)
          throw AppError.of(
            'CONFLICT',
            `Rate ${id} is ${id.startsWith('genai-prices@') || catalogs.speech.entries().some((entry) => entry.id === id) ? 'the built-in catalog’s: upgrade the catalog to change it' : 'the rate card’s: change the rate card file'}`,
          );
        throw AppError.of('NOT_FOUND', 'Rate not found');
      }
      if (stored.effective_to !== null && Date.parse(stored.effective_to) <= nowMs)
        return listing(fromStored(stored), card());
      const ended: RateRecord = {
        ...fromStored(stored),
        effective_to: new Date(Math.max(nowMs, Date.parse(stored.effective_from))).toISOString(),
        version: stored.version + 1,
      };
      await entries.save(ended);
      const answer = await publish(ended, nowMs, actor);
      // Counted as ended at once by this process's cap check, not only after the next refresh.
      tenants.apply([{ entry: toCardEntry(ended), version: ended.version }]);
      return answer;
    },
  };
}

export type TenantRateService = ReturnType<typeof createTenantRateService>;

function fromStored(stored: StoredRate): RateRecord {
  return { ...stored };
}

/** The record of a new entry, or a 422 naming every problem (pydantic-shaped, at the field). */
function toRecord(body: RateCreateBody, card: RateCard, nowMs: number, maxAgeMs: number): RateRecord {
  const problems: ValidationItem[] = [];
  const from = body.effective_from?.getTime() ?? nowMs;
  if (from < nowMs - maxAgeMs)
    problems.push(
      valueError(
        'effective_from',
        `effective_from is more than ${maxAgeMs / 86_400_000} days in the past, before any usage callmeter takes`,
        body.effective_from?.toISOString(),
      ),
    );
  for (const field of ['effective_from', 'effective_to'] as const) {
    const at = body[field];
    if (at !== undefined && at.getTime() > LATEST_STORED_MS)
      problems.push(
        valueError(
          field,
          `${field} is after ${new Date(LATEST_STORED_MS).toISOString()}, the latest instant stored`,
          at.toISOString(),
        ),
      );
  }
  if (body.effective_to !== undefined && body.effective_to.getTime() <= from)
    problems.push(
      valueError('effective_to', 'effective_to must be after effective_from', body.effective_to.toISOString()),
    );
  if ((body.event_type === undefined) === (body.service === undefined))
    problems.push(valueError('event_type', 'name exactly one of event_type and service', body.event_type ?? null));
  const dimension = body.dimension ?? 'quantity';
  const eventType = body.event_type ?? null;
  const service = body.service ?? null;
  if (dimension !== 'quantity' && eventType !== 'llm_tokens' && service !== 'llm')
    problems.push(
      valueError(
        'dimension',
        `${dimension} prices language-model tokens: use event_type llm_tokens or service llm`,
        dimension,
      ),
    );
  for (const field of ['price', 'per'] as const) {
    const value = body[field];
    if (value !== undefined && new Exact(value).decimalPlaces() > MONEY_SCALE)
      problems.push(valueError(field, `at most ${MONEY_SCALE} decimals`, value));
  }
  if (body.per !== undefined && new Exact(body.per).isZero())
    problems.push(valueError('per', 'per must be greater than 0', body.per));
  if (body.currency !== undefined && body.currency !== card.currency)
    problems.push(
      valueError(
        'currency',
        `prices are in ${card.currency}, every tenant's one currency: a price in ${body.currency} would be added into costs in ${card.currency}`,
        body.currency,
      ),
    );
  if (problems.length > 0) throw AppError.validation(problems);
  const unit = dimension === 'quantity' ? unitOf(card, eventType, service) : 'token';
  const record: RateRecord = {
    id: `tenant-${randomUUID()}`,
    user_id: body.user_id,
    provider: body.provider.trim().toLowerCase(),
    model: body.model?.trim().toLowerCase() ?? null,
    event_type: eventType,
    service,
    pricing: dimension,
    unit,
    price: new Exact(body.price).toFixed(),
    price_per: new Exact(body.per ?? '1').toFixed(),
    currency: card.currency,
    effective_from: new Date(from).toISOString(),
    effective_to: body.effective_to?.toISOString() ?? null,
    created_at: new Date(nowMs).toISOString(),
    version: 1,
  };
  // The card's own checks (a known event type or service, its unit, a price per unit within the bound).
  const cardProblems = listRateCardProblems({
    version: 1,
    currency: card.currency,
    services: card.services,
    provider_aliases: card.provider_aliases,
    rates: [toCardEntry(record)],
  });
  if (cardProblems.length > 0)
    throw AppError.validation(
      cardProblems.map((problem) => valueError('price', problem.replace(/^rate [^:]+: /, ''), body.price)),
    );
  return record;
}

function unitOf(card: RateCard, eventType: string | null, service: string | null): string {
  const described = Object.entries(card.services).find(
    ([type, entry]) => type === eventType || entry.service === service,
  );
  return described?.[1].unit ?? 'unit';
}

/** A tenant entry as GET /api/rates lists it. */
function listing(record: RateRecord, card: RateCard): RateListing {
  const eventType =
    record.event_type ?? Object.entries(card.services).find(([, entry]) => entry.service === record.service)?.[0] ?? '';
  return {
    id: record.id,
    scope: 'tenant',
    user_id: record.user_id,
    provider: record.provider,
    model: record.model,
    service: record.service ?? card.services[eventType]?.service ?? '',
    event_type: eventType,
    dimension: record.pricing,
    unit: record.unit,
    price: record.price,
    per: record.price_per,
    currency: record.currency,
    effective_from: record.effective_from,
    effective_to: record.effective_to,
    source: 'POST /api/rates',
  };
}

function valueError(field: string, message: string, input: unknown): ValidationItem {
  return { type: 'value_error', loc: ['body', field], msg: `Value error, ${message}`, input, ctx: { error: {} } };
}
