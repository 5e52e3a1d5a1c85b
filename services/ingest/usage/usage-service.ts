import { randomUUID } from 'node:crypto';
import type { UsageEventBody } from '../../../schemas/http/usage-event.ts';
import { AppError, type ValidationItem } from '../../shared/errors.ts';
import { makeEnvelope } from '../../domain/records/index.ts';
import type { UsageRecord } from '../../domain/records/index.ts';
import type { RecordSink } from '../../domain/records/index.ts';
import type { SessionStore } from '../sessions/session-store.ts';
import { isFinalStatus } from '../sessions/session.ts';
import { DEFAULT_REFRESH_MS, SessionIdentities, type SessionIdentity } from './session-identities.ts';
import { reportedCostProblems } from '../../domain/usage/index.ts';
import { usageQuantities, type Quantities } from '../../domain/usage/index.ts';
import { TOKEN_KINDS, type TokenKind } from '../../domain/pricing/index.ts';
import type { RateCard } from '../../../schemas/rate-card.ts';
import type { Catalogs } from '../../domain/pricing/index.ts';
import { priceUsage } from '../../domain/pricing/index.ts';
import type { PyValue } from '../../shared/validation/py-value.ts';
import { assertActsFor } from '../../shared/auth/tenant.ts';
import type { AcceptedRecord, AcceptedUsage } from './accepted-usage.ts';
import type { ClosedPeriods } from '../periods/closed-periods.ts';
import { acceptUsageBatch, type BatchItemResult } from './usage-batch.ts';
import { FUTURE_TOLERANCE_MS, instantOutsideWindow } from '../../shared/validation/instant-window.ts';

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
  /**
   * How far after its session's ended_at an event may have occurred (USAGE_GRACE_AFTER_END_SECONDS):
   * its `timestamp`, or its receipt when it has none.
   */
  readonly graceAfterEndMs: number;
  /** Kept identities of the sessions usage names; built here when not given (start.ts shares them with the session store). */
  readonly identities?: SessionIdentities;
  /** null: the answer carries only the reported costs (the cost is still the consumer's). */
  readonly pricing?: AcceptancePricing | null;
  /** The tenants' closed months: usage of one is a 409 (docs/statements.md); absent: none is closed. */
  readonly closedPeriods?: Pick<ClosedPeriods, 'closedAt'> | null;
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
  closedPeriods = null,
  identities = new SessionIdentities(sessions, { refreshMs: identityRefreshMs(graceAfterEndMs), now }),
}: UsageServiceDeps) {
  /**
   * The record of one event, or the 422 items that refuse it; throws NOT_FOUND for an unknown session
   * and CONFLICT for usage that occurred more than the grace after its session's end; FORBIDDEN when a bound credential
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
    const occurredAtMs = body.timestamp?.getTime() ?? receivedAtMs;
    const outside = instantOutsideWindow(
      'timestamp',
      occurredAtMs,
      body.timestamp?.toISOString(),
      { nowMs: receivedAtMs, maxAgeMs },
      '; usage that old is changed by a correction, not a new event',
    );
    if (body.user_id !== session.user_id)
      items.push(valueError('user_id', 'the session belongs to another user', body.user_id));
    // A refusal is never decided on a kept identity: the session's end may have moved since it was read.
    else if (outside === null && endedBefore(session, occurredAtMs, graceAfterEndMs)) {
      const fresh = await identities.readAfresh(body.session_id);
      if (fresh !== null && endedBefore(fresh, occurredAtMs, graceAfterEndMs))
        throw usageAfterEnd(fresh, occurredAtMs, graceAfterEndMs);
    }
    if (outside !== null) items.push(outside);
    else {
      const closed = closedPeriods?.closedAt(session.user_id, occurredAtMs) ?? null;
      if (closed !== null)
        throw AppError.of(
          'CONFLICT',
          `Usage at ${new Date(occurredAtMs).toISOString()} falls in period ${closed.period} of user ${closed.user_id}, closed at ${new Date(closed.closed_ms).toISOString()}: a closed period takes no more usage; bill it in an open period`,
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
): AcceptedRecord {
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
    ...partsCarried(quantities),
    reported_unit_cost: body.unit_cost ?? null,
    reported_total_cost: body.total_cost ?? null,
    occurred_at: new Date(occurredAtMs).toISOString(),
    received_at: new Date(receivedAtMs).toISOString(),
  };
}

/**
 * The token parts and connected time the event carries; the record leaves out those it does not, as
 * records before them did (and a consumer that predates them still reads it).
 */
function partsCarried(quantities: Quantities): Partial<Pick<UsageRecord, TokenKind | 'session_duration_seconds'>> {
  const parts = TOKEN_KINDS.filter(
    (kind) => kind !== 'input_tokens' && kind !== 'output_tokens' && quantities[kind] !== null,
  );
  const carried: Partial<Pick<UsageRecord, TokenKind | 'session_duration_seconds'>> = Object.fromEntries(
    parts.map((kind) => [kind, quantities[kind]]),
  );
  if (quantities.session_duration_seconds !== null)
    carried.session_duration_seconds = quantities.session_duration_seconds;
  return carried;
}

/**
 * Usage is judged by when it occurred, not by when it arrived: a worker that spooled a call's usage
 * through an outage replays it days later, and it is still that call's. Only usage that occurred more
 * than the grace after the call ended is not the call's; usage without a timestamp occurred at its
 * receipt, so for it the grace is how late after the end it may still arrive.
 */
function endedBefore(session: SessionIdentity, occurredAtMs: number, graceAfterEndMs: number): boolean {
  const end = effectiveEnd(session);
  return end !== null && occurredAtMs > end + graceAfterEndMs;
}

/**
 * When a final session ended, as far as usage is concerned: its ended_at, but never later than 5 minutes
 * after its last change, the bound a PATCH's ended_at has (session-instants.ts). A session stored with an
 * end in the far future before that bound existed would otherwise take usage until then.
 */
function effectiveEnd(session: SessionIdentity): number | null {
  if (!isFinalStatus(session.status) || session.ended_at === null) return null;
  return Math.min(session.ended_at, session.updated_at + FUTURE_TOLERANCE_MS);
}

function usageAfterEnd(session: SessionIdentity, occurredAtMs: number, graceAfterEndMs: number): AppError {
  const ended = new Date(effectiveEnd(session)!).toISOString();
  const occurred = new Date(occurredAtMs).toISOString();
  return AppError.of(
    'CONFLICT',
    `Session ended at ${ended}; usage at ${occurred} is more than ${graceAfterEndMs / 1000} seconds after its end: it takes no more usage`,
  );
}

/**
 * How long a kept identity is trusted. Changes made through this process reach the kept identities at
 * once (start.ts); one made by another ingest process is seen within this, and within the grace when
 * that is shorter, so usage past a session's end is never taken for longer than the grace.
 */
export function identityRefreshMs(graceAfterEndMs: number): number {
  return Math.min(DEFAULT_REFRESH_MS, graceAfterEndMs);
}

function valueError(field: string, message: string, input: unknown): ValidationItem {
  return { type: 'value_error', loc: ['body', field], msg: `Value error, ${message}`, input, ctx: { error: {} } };
}
