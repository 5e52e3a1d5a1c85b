import { randomUUID } from 'node:crypto';
import type { UsageEventBody } from '../../schemas/http/usage-event.ts';
import { AppError, type ValidationItem } from '../shared/errors.ts';
import { makeEnvelope, type Envelope } from '../shared/records/envelope.ts';
import type { UsageRecord } from '../shared/records/payloads.ts';
import type { RecordSink } from '../shared/records/record-sink.ts';
import type { SessionStore } from './sessions/session-store.ts';
import { isFinalStatus } from './sessions/session.ts';
import { DEFAULT_REFRESH_MS, SessionIdentities, type SessionIdentity } from './usage/session-identities.ts';
import { reportedCostProblems } from '../shared/usage/reported-cost.ts';
import { usageQuantities, type Quantities } from '../shared/usage/usage-quantity.ts';
import { TOKEN_KINDS } from '../shared/pricing/token-kinds.ts';
import type { RateCard } from '../../schemas/rate-card.ts';
import type { Catalogs } from '../shared/pricing/catalogs.ts';
import { priceUsage, type PricedUsage } from '../shared/pricing/price-usage.ts';
import type { PyValue } from '../shared/validation/py-value.ts';
import { assertActsFor } from '../shared/auth/tenant.ts';
import { acceptUsageBatch, type BatchItemResult } from './usage/usage-batch.ts';

const FUTURE_TOLERANCE_MS = 5 * 60_000;
const DAY_MS = 86_400_000;

/** What POST /api/usage/events answers: compat.md's keys, and the cost as priced at acceptance. */
export interface AcceptedUsage {
  readonly record: UsageRecord;
  readonly envelope: Envelope;
  /** The event priced as the consumer will price it (the same card and catalogs; a tenant entry made within the last seconds may not be applied yet). */
  readonly priced: PricedUsage | null;
}

/** The prices ingest quotes an accepted event at; the consumer prices what is stored. */
export interface AcceptancePricing {
  readonly card: () => RateCard;
  readonly catalogs: Catalogs;
}

export interface UsageServiceDeps {
  readonly sessions: SessionStore;
  readonly sink: RecordSink;
  readonly now?: () => number;
  /** The oldest usage an event may report, before its receipt (USAGE_MAX_AGE_DAYS). */
  readonly maxAgeMs: number;
  /** How long after its session ended an event is still taken (USAGE_GRACE_AFTER_END_SECONDS). */
  readonly graceAfterEndMs: number;
  /** null: the answer carries only the reported costs (the cost is still the consumer's). */
  readonly pricing?: AcceptancePricing | null;
}

/**
 * Checks an event against its session, converts the workers' body to a quantity, and publishes the
 * record; pricing is the consumer's (it applies the rate card). Answered once the record is durable.
 */
export function createUsageService({
  sessions,
  sink,
  now = Date.now,
  maxAgeMs,
  graceAfterEndMs,
  pricing = null,
}: UsageServiceDeps) {
  // Read again no later than the grace: a session that ended is refused within the grace of its end.
  const identities = new SessionIdentities(sessions, { refreshMs: Math.min(DEFAULT_REFRESH_MS, graceAfterEndMs), now });

  /**
   * The record of one event, or the 422 items that refuse it; throws NOT_FOUND for an unknown session
   * and CONFLICT for one that ended more than the grace ago; FORBIDDEN when a bound credential
   * (`tenant`) sends usage of, or into a session of, another tenant.
   */
  async function prepare(
    body: UsageEventBody,
    receivedAtMs: number,
    tenant: string | null,
  ): Promise<AcceptedUsage | readonly ValidationItem[]> {
    assertActsFor(tenant, body.user_id, 'record usage');
    const session = await identities.read(body.session_id);
    if (session === null) throw AppError.of('NOT_FOUND', 'Session not found');
    assertActsFor(tenant, session.user_id, 'record usage');
    const items: ValidationItem[] = [];
    if (body.user_id !== session.user_id)
      items.push(valueError('user_id', 'the session belongs to another user', body.user_id));
    else assertSessionOpen(session, receivedAtMs, graceAfterEndMs);
    const occurredAtMs = body.timestamp?.getTime() ?? receivedAtMs;
    if (occurredAtMs > receivedAtMs + FUTURE_TOLERANCE_MS)
      items.push(
        valueError('timestamp', 'timestamp is more than 5 minutes in the future', body.timestamp?.toISOString()),
      );
    if (occurredAtMs < receivedAtMs - maxAgeMs) {
      const days = maxAgeMs / DAY_MS;
      items.push(
        valueError(
          'timestamp',
          `timestamp is more than ${days} days in the past; usage that old is changed by a correction, not a new event`,
          body.timestamp?.toISOString(),
        ),
      );
    }
    const quantities = usageQuantities(body.event_type, body);
    if ('type' in quantities) items.push(quantities);
    else items.push(...reportedCostProblems(quantities.quantity, body));
    if (items.length > 0 || 'type' in quantities) return items;
    const record = toRecord(body, session, quantities, occurredAtMs, receivedAtMs);
    const priced =
      pricing === null
        ? null
        : priceUsage(pricing.card(), { ...record, occurred_at: new Date(record.occurred_at) }, pricing.catalogs);
    return {
      record,
      priced,
      envelope: makeEnvelope(
        'usage',
        session.id,
        record,
        new Date(occurredAtMs),
        new Date(receivedAtMs),
        record.event_id as `${string}-${string}-${string}-${string}-${string}`,
      ),
    };
  }

  const publish = (accepted: readonly AcceptedUsage[]) => sink.publish(accepted.map((a) => a.envelope));

  return {
    async accept(body: UsageEventBody, tenant: string | null = null): Promise<AcceptedUsage> {
      const prepared = await prepare(body, now(), tenant);
      if (Array.isArray(prepared)) throw AppError.validation(prepared);
      const accepted = prepared as AcceptedUsage;
      await publish([accepted]);
      return accepted;
    },
    /** Each item accepted or rejected alone (`usage/usage-batch.ts`); the results are the answer's items, in order. */
    acceptBatch: (items: readonly PyValue[], tenant: string | null = null): Promise<BatchItemResult[]> =>
      acceptUsageBatch({ prepare: (body, receivedAtMs) => prepare(body, receivedAtMs, tenant), publish }, items, now()),
  };
}

export type UsageService = ReturnType<typeof createUsageService>;

// The envelope id is the event id: a resent event is the same record.
function toRecord(
  body: UsageEventBody,
  session: SessionIdentity,
  quantities: Quantities,
  occurredAtMs: number,
  receivedAtMs: number,
): UsageRecord {
  return {
    event_id: body.event_id ?? randomUUID(),
    session_id: session.id,
    user_id: session.user_id,
    agent_id: body.agent_id ?? session.agent_id,
    provider: body.provider.trim().toLowerCase(),
    event_type: body.event_type,
    model: body.model ?? null,
    quantity: quantities.quantity,
    input_tokens: quantities.input_tokens,
    output_tokens: quantities.output_tokens,
    ...tokenParts(quantities),
    reported_unit_cost: body.unit_cost ?? null,
    reported_total_cost: body.total_cost ?? null,
    occurred_at: new Date(occurredAtMs).toISOString(),
    received_at: new Date(receivedAtMs).toISOString(),
  };
}

/** The token parts the event carries; the record leaves out those it does not, as records before them did. */
function tokenParts(quantities: Quantities): Partial<UsageRecord> {
  const parts = TOKEN_KINDS.filter(
    (kind) => kind !== 'input_tokens' && kind !== 'output_tokens' && quantities[kind] !== null,
  );
  return Object.fromEntries(parts.map((kind) => [kind, quantities[kind]]));
}

/** A finished call's bill stops moving: its usage is refused once the grace after its end is over. */
function assertSessionOpen(session: SessionIdentity, receivedAtMs: number, graceAfterEndMs: number): void {
  if (!isFinalStatus(session.status) || session.ended_at === null || receivedAtMs <= session.ended_at + graceAfterEndMs)
    return;
  const ended = new Date(session.ended_at).toISOString();
  throw AppError.of(
    'CONFLICT',
    `Session ended at ${ended}, more than ${graceAfterEndMs / 1000} seconds ago: it takes no more usage`,
  );
}

function valueError(field: string, message: string, input: unknown): ValidationItem {
  return { type: 'value_error', loc: ['body', field], msg: `Value error, ${message}`, input, ctx: { error: {} } };
}
