import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CorrectionKind, UsageAmendBody } from '../../../schemas/http/usage-corrections.ts';
import { TOKEN_KINDS } from '../../../schemas/pricing-terms.ts';
import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import type { UsageEventRow } from '../../shared/clickhouse/tables/usage-events.ts';
import { tableName } from '../../shared/clickhouse/tables.ts';
import { AppError } from '../../shared/errors.ts';
import { Exact } from '../../shared/exact-decimal.ts';
import { makeEnvelope, type RecordSink, type UsageRecord } from '../../domain/records/index.ts';
import { usageQuantities } from '../../domain/usage/index.ts';
import { guardKey, type CorrectionGuard } from './correction-guard.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** How long a correction waits for the one before it, of the same event, to be stored, before a 409. */
const PREVIOUS_STORED_WAIT_MS = 3_000;

/** One row of an event's family (the event as sent, and every row of its corrections), as read back. */
export type FamilyRow = Pick<
  UsageEventRow,
  | 'session_id'
  | 'user_id'
  | 'agent_id'
  | 'provider'
  | 'service'
  | 'model'
  | 'quantity'
  | 'unit'
  | 'unit_cost'
  | 'cost'
  | 'reported_unit_cost'
  | 'reported_total_cost'
  | 'cost_source'
  | 'rate_id'
  | 'currency'
  | 'price_scope'
  | 'occurred_at'
  | 'session_duration_seconds'
  | 'correction_id'
  | 'correction_kind'
  | 'correction_of'
  | 'reverses'
> & {
  readonly id: string;
  readonly event_type: string;
  readonly components: readonly (readonly [string, string, string, string, string, string, string])[];
  readonly tokens: Readonly<Record<string, string | null>>;
  /** When the row was inserted (epoch ms). */
  readonly stored_ms: number;
  readonly weight: number;
};

/**
 * The columns of a stored row as corrections read it back: money and counts as text (exact), the
 * parts as tuples of text. The aliases of id and occurred_at differ from the columns: WHERE resolves
 * to a SELECT alias first.
 */
export const FAMILY_ROW_COLUMNS = `toString(id) AS row_id, toString(session_id) AS session_id, user_id, agent_id, provider,
  service, toString(event_type) AS event_type, model, toString(quantity) AS quantity, unit,
  toString(unit_cost) AS unit_cost, toString(cost) AS cost, toString(reported_unit_cost) AS reported_unit_cost,
  toString(reported_total_cost) AS reported_total_cost, toString(cost_source) AS cost_source, rate_id, currency,
  price_scope,
  arrayMap(part -> (part.1, toString(part.2), part.3, toString(part.4), toString(part.5), toString(part.6), part.7), cost_components) AS components,
  ${TOKEN_KINDS.map((kind) => `toString(${kind}) AS ${kind}_text`).join(', ')},
  toString(session_duration_seconds) AS session_duration_text, toString(toUnixTimestamp64Milli(occurred_at)) AS occurred_ms,
  toString(toUnixTimestamp64Milli(stored_at)) AS stored_ms, weight, toString(correction_id) AS correction_text,
  correction_kind, toString(correction_of) AS correction_of_text, toString(reverses) AS reverses_text`;

/** One row read with FAMILY_ROW_COLUMNS. */
export function familyRowOf(row: Record<string, unknown>): FamilyRow {
  return {
    ...(row as unknown as FamilyRow),
    id: row.row_id as string,
    tokens: Object.fromEntries(TOKEN_KINDS.map((kind) => [kind, (row[`${kind}_text`] as string | null) ?? null])),
    session_duration_seconds: (row.session_duration_text as string | null) ?? null,
    occurred_at: new Date(Number(row.occurred_ms)).toISOString(),
    stored_ms: Number(row.stored_ms),
    weight: Number(row.weight),
    correction_id: (row.correction_text as string | null) ?? null,
    correction_of: (row.correction_of_text as string | null) ?? null,
    reverses: (row.reverses_text as string | null) ?? null,
  };
}

export interface CorrectionAnswer {
  readonly id: string;
  readonly event_id: string;
  readonly kind: CorrectionKind;
  readonly reason: string;
  readonly created_at: string;
  readonly user_id: string;
  readonly session_id: string;
}

export interface UsageCorrectionsDeps {
  /** Where stored events are read (ingest's own reads). */
  readonly reads: ClickHouse;
  readonly sink: RecordSink;
  readonly guard: CorrectionGuard;
  readonly now?: () => number;
}

/**
 * Voids and amends of stored usage (docs/corrections.md): a correction is new usage rows on the record
 * path, never a change of a stored one. A void reverses the event's row in force (the event as sent,
 * or its latest amend's replacement): the reversal is that row's stored price negated, weighing -1, so
 * every rollup's group nets out. An amend reverses it likewise and adds a replacement, the row in force
 * with the changes, which the consumer prices at the event's own instant as any event.
 *
 * Two corrections of one event never overlap: each holds the event (the guard) while it reads the
 * event's rows and publishes, and waits for the one published before it to be stored (the guard
 * remembers it), so that each reverses the row in force and never one reversed already.
 */
export function createUsageCorrections({ reads, sink, guard, now = Date.now }: UsageCorrectionsDeps) {
  const usageEvents = tableName(reads, 'usageEvents');

  /** Where the event is stored: its tenant and instant (rows of its corrections share both). */
  async function locate(eventId: string, tenant: string | null): Promise<{ user_id: string; occurred_ms: string }> {
    const result = await reads.client.query({
      query: `SELECT DISTINCT user_id, toString(toUnixTimestamp64Milli(occurred_at)) AS occurred_ms FROM ${usageEvents}
        WHERE id = {id:UUID}${tenant === null ? '' : ' AND user_id = {user:String}'} LIMIT 2`,
      query_params: { id: eventId, ...(tenant === null ? {} : { user: tenant }) },
      format: 'JSONEachRow',
    });
    const found = await result.json<{ user_id: string; occurred_ms: string }>();
    if (found.length === 0) throw AppError.of('NOT_FOUND', 'Usage event not found');
    if (found.length > 1)
      throw AppError.of(
        'CONFLICT',
        `Usage event ${eventId} exists for more than one user: send x-user-id to say whose event it is`,
      );
    return found[0]!;
  }

  async function family(eventId: string, userId: string, occurredMs: string): Promise<FamilyRow[]> {
    const result = await reads.client.query({
      query: `SELECT ${FAMILY_ROW_COLUMNS} FROM ${usageEvents}
        WHERE user_id = {user:String} AND occurred_at = fromUnixTimestamp64Milli(toInt64({at:Int64}), 'UTC')
          AND (id = {id:UUID} OR correction_of = {id:UUID})`,
      query_params: { user: userId, at: occurredMs, id: eventId },
      format: 'JSONEachRow',
    });
    return (await result.json<Record<string, unknown>>()).map(familyRowOf);
  }

  /** The event's rows once the correction published before this one is among them (or a 409 to retry). */
  async function settledFamily(eventId: string, userId: string, occurredMs: string, previous: string | null) {
    const deadline = now() + PREVIOUS_STORED_WAIT_MS;
    for (;;) {
      const rows = await family(eventId, userId, occurredMs);
      if (previous === null || rows.some((row) => row.correction_id === previous)) return rows;
      if (now() >= deadline)
        throw AppError.of(
          'CONFLICT',
          `The previous correction of usage event ${eventId} (${previous}) is not stored yet: retry in a few seconds`,
          { headers: { 'Retry-After': '2' } },
        );
      await sleep(50);
    }
  }

  async function correct(
    eventId: string,
    kind: CorrectionKind,
    reason: string,
    changes: UsageAmendBody | null,
    tenant: string | null,
  ): Promise<CorrectionAnswer> {
    if (!UUID.test(eventId)) throw AppError.of('NOT_FOUND', 'Usage event not found');
    const id = eventId.toLowerCase();
    const { user_id: userId, occurred_ms: occurredMs } = await locate(id, tenant);
    return guard.hold(userId, id, async () => {
      const previous = (await guard.previous([{ userId, eventId: id }])).get(guardKey({ userId, eventId: id }));
      const rows = await settledFamily(id, userId, occurredMs, previous ?? null);
      const sent = rows.find((row) => row.id === id);
      if (sent === undefined) throw AppError.of('NOT_FOUND', 'Usage event not found');
      if (sent.correction_of !== null)
        throw AppError.of(
          'CONFLICT',
          `Usage event ${id} is a row of a correction of event ${sent.correction_of}: correct that event instead`,
        );
      const voided = rows.find((row) => row.correction_kind === 'void');
      if (voided !== undefined)
        throw AppError.of('CONFLICT', `Usage event ${id} was voided already (correction ${voided.correction_id})`);
      const reversedIds = new Set(rows.flatMap((row) => (row.reverses === null ? [] : [row.reverses])));
      const inForce = rows.filter((row) => row.weight === 1 && !reversedIds.has(row.id));
      if (inForce.length !== 1) throw new Error(`usage event ${id} has ${inForce.length} rows in force`);
      const current = inForce[0]!;
      const createdAt = new Date(now()).toISOString();
      const correction = { id: randomUUID(), kind, of: id, reason, created_at: createdAt };
      const records = [reversalOf(current, correction)];
      if (changes !== null) {
        const replacement = replacementOf(current, changes, correction);
        // A retry of an amend whose answer was lost finds it made: a second one would change nothing.
        if (sameUsage(current, replacement))
          throw AppError.of(
            'CONFLICT',
            `Usage event ${id} has these values already: an amend changes at least one of quantity, provider, model or a token count`,
          );
        records.push(replacement);
      }
      await sink.publish(correctionEnvelopes(records, createdAt));
      // The records are durable: a mark Redis refuses leaves the next correction to the consumer's once-only reversal.
      await guard.published([{ userId, eventId: id, correctionId: correction.id }]).catch(() => undefined);
      const { of, ...answer } = correction;
      return { ...answer, event_id: of, user_id: userId, session_id: current.session_id };
    });
  }

  return {
    void: (eventId: string, reason: string, tenant: string | null) => correct(eventId, 'void', reason, null, tenant),
    amend: (eventId: string, body: UsageAmendBody, tenant: string | null) => {
      const { reason, ...changes } = body;
      if (Object.values(changes).every((value) => value === undefined))
        throw AppError.validation([
          {
            type: 'value_error',
            loc: ['body'],
            msg: 'Value error, an amend changes at least one of quantity, provider, model or a token count',
            input: body,
            ctx: { error: {} },
          },
        ]);
      return correct(eventId, 'amend', reason, body, tenant);
    },
  };
}

export type UsageCorrections = ReturnType<typeof createUsageCorrections>;

export interface Correction {
  readonly id: string;
  readonly kind: CorrectionKind;
  readonly of: string;
  readonly reason: string;
  readonly created_at: string;
}

/** The record of the row in force as it was sent, under a new id, received when the correction was made. */
export function baseRecord(row: FamilyRow, eventId: string, createdAt: string): UsageRecord {
  return {
    event_id: eventId,
    session_id: row.session_id,
    user_id: row.user_id,
    agent_id: row.agent_id === '' ? null : row.agent_id,
    provider: row.provider,
    event_type: row.event_type,
    model: row.model === '' ? null : row.model,
    quantity: row.quantity,
    input_tokens: null,
    output_tokens: null,
    reported_unit_cost: row.reported_unit_cost,
    reported_total_cost: row.reported_total_cost,
    occurred_at: row.occurred_at,
    received_at: createdAt,
  };
}

/** The reversal of the row in force: the correction's own id, the row's price to negate. */
export function reversalOf(row: FamilyRow, correction: Correction): UsageRecord {
  return {
    ...baseRecord(row, correction.id, correction.created_at),
    correction: {
      ...correction,
      reverses: row.id,
      reversed: {
        service: row.service,
        quantity: row.quantity,
        unit: row.unit,
        unit_cost: row.unit_cost,
        cost: row.cost,
        cost_source: row.cost_source,
        rate_id: row.rate_id,
        currency: row.currency,
        price_scope: row.price_scope,
        components: row.components.map(([dimension, quantity, unit, price, per, cost, rate_id]) => ({
          dimension,
          quantity,
          unit,
          price,
          per,
          cost,
          rate_id,
        })),
      },
    },
  };
}

/**
 * The amend's replacement: the row in force with the changes, a new id, no reported costs (they were
 * the worker's figures for what it sent); the consumer prices it. Changed token counts of an LLM event
 * give its quantity when no quantity is sent, as they do for a new event.
 */
function replacementOf(row: FamilyRow, changes: UsageAmendBody, correction: Correction): UsageRecord {
  const tokens = Object.fromEntries(
    TOKEN_KINDS.map((kind) => {
      const changed = changes[kind];
      return [kind, changed === undefined ? (row.tokens[kind] ?? null) : String(changed)];
    }),
  ) as Record<(typeof TOKEN_KINDS)[number], string | null>;
  const tokensChanged = TOKEN_KINDS.some((kind) => changes[kind] !== undefined);
  const sentTokens = Object.fromEntries(
    TOKEN_KINDS.flatMap((kind) => (tokens[kind] === null ? [] : [[kind, Number(tokens[kind])]])),
  );
  const duration =
    changes.session_duration_seconds === undefined
      ? row.session_duration_seconds
      : String(changes.session_duration_seconds);
  const quantities = usageQuantities(row.event_type, {
    ...sentTokens,
    ...(changes.quantity !== undefined
      ? { quantity: String(changes.quantity) }
      : tokensChanged && row.event_type === 'llm_tokens'
        ? {}
        : { quantity: row.quantity }),
    ...(duration === null ? {} : { session_duration_seconds: duration }),
  });
  if ('type' in quantities) throw AppError.validation([quantities]);
  return {
    ...baseRecord(row, randomUUID(), correction.created_at),
    provider: changes.provider?.toLowerCase() ?? row.provider,
    model: changes.model ?? (row.model === '' ? null : row.model),
    quantity: quantities.quantity,
    ...Object.fromEntries(TOKEN_KINDS.map((kind) => [kind, quantities[kind]])),
    session_duration_seconds: quantities.session_duration_seconds,
    reported_unit_cost: null,
    reported_total_cost: null,
    correction,
  } as UsageRecord;
}

/** Whether a replacement would store what the row in force holds: the same provider, model and quantities. */
function sameUsage(row: FamilyRow, replacement: UsageRecord): boolean {
  const same = (a: string | number | null | undefined, b: string | number | null | undefined) =>
    a === null || a === undefined || b === null || b === undefined ? (a ?? null) === (b ?? null) : new Exact(a).eq(b);
  const sent = replacement as unknown as Record<string, string | number | null | undefined>;
  return (
    replacement.provider === row.provider &&
    (replacement.model ?? '') === row.model &&
    same(replacement.quantity, row.quantity) &&
    same(replacement.session_duration_seconds, row.session_duration_seconds) &&
    TOKEN_KINDS.every((kind) => same(sent[kind], row.tokens[kind]))
  );
}

/** A correction's records on the record path: keyed by their session, as usage is, so they follow the event. */
export function correctionEnvelopes(records: readonly UsageRecord[], createdAt: string) {
  return records.map((record) =>
    makeEnvelope(
      'usage',
      record.session_id,
      record,
      new Date(record.occurred_at),
      new Date(createdAt),
      record.event_id as `${string}-${string}-${string}-${string}-${string}`,
    ),
  );
}

/** The record of a stored row as it was sent: its token counts and the worker's reported costs, a new id. */
export function sentRecordOf(row: FamilyRow, eventId: string, receivedAt: string): UsageRecord {
  return {
    ...baseRecord(row, eventId, receivedAt),
    ...Object.fromEntries(TOKEN_KINDS.map((kind) => [kind, row.tokens[kind] ?? null])),
    session_duration_seconds: row.session_duration_seconds,
  } as UsageRecord;
}
