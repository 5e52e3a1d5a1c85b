import { usageEventBatchBody, usageEventBody } from '../../../schemas/http/usage-event.ts';
import { AppError, type ValidationItem } from '../../shared/errors.ts';
import { Exact } from '../../shared/exact-decimal.ts';
import { defineRoute, type Route } from '../../shared/http/define-route.ts';
import { BATCH_BODY_LIMIT } from '../../shared/http/read-raw-body.ts';
import { compileRequest } from '../../shared/validation/compile-request.ts';
import type { PyValue } from '../../shared/validation/py-value.ts';
import type { AcceptedUsage, UsageService } from '../usage-service.ts';

const TAGS = ['usage'];
const validateEvent = compileRequest({ body: usageEventBody });
const validateBatch = compileRequest({ body: usageEventBatchBody });

/**
 * compat.md's usage-event object: unit_cost and total_cost are the worker's own when it sent them (as the
 * replaced service echoed them), else as priced at acceptance (an LLM's unit cost per 1,000 tokens, as the
 * replaced service showed it); `cost` and `cost_source` are callmeter's price, which the views will show.
 */
function toUsageResponse({ record, priced }: AcceptedUsage) {
  return {
    id: record.event_id, session_id: record.session_id, user_id: record.user_id, agent_id: record.agent_id, provider: record.provider,
    event_type: record.event_type, quantity: record.quantity,
    unit_cost: record.reported_unit_cost ?? (priced === null || priced.cost_source === 'unpriced' ? null : displayedUnitCost(record.event_type, priced.unit_cost)),
    total_cost: record.reported_total_cost ?? (priced === null || priced.cost_source === 'unpriced' ? null : priced.cost),
    created_at: record.received_at, occurred_at: record.occurred_at, model: record.model, input_tokens: record.input_tokens, output_tokens: record.output_tokens,
    ...(priced === null ? {} : { cost: priced.cost, cost_source: priced.cost_source }),
  };
}

type BatchResult = { index: number; id: string | null; status: 'accepted' | 'duplicate' | 'rejected'; errors?: readonly ValidationItem[]; cost?: string; cost_source?: string };

export function usageRoutes(usage: UsageService): Route[] {
  return [
    defineRoute({
      method: 'POST', path: '/api/usage/events', summary: 'Record a usage event (priced by the server from the rate card)', tags: TAGS, status: 201,
      responses: {
        404: { description: 'Unknown session', example: { detail: 'Session not found' } },
        409: { description: 'The session ended more than the grace period ago (default 1 hour): its bill no longer moves', example: { detail: 'Session ended at 2026-11-24T10:00:00.000Z, more than 3600 seconds ago: it takes no more usage' } },
        503: { description: 'Not stored: retry' },
      },
      request: { body: usageEventBody },
      handle: async ({ body }) => toUsageResponse(await usage.accept(body)),
    }),
    defineRoute({
      method: 'POST', path: '/api/usage/events/batch', summary: 'Record up to 1,000 usage events; each is accepted or rejected alone', tags: TAGS,
      request: { body: usageEventBatchBody }, rawBody: true, bodyLimitBytes: BATCH_BODY_LIMIT, pythonJson: true,
      handle: async ({ rawBody }) => acceptBatch(usage, rawBody),
    }),
  ];
}

async function acceptBatch(usage: UsageService, raw: PyValue | undefined): Promise<BatchResult[]> {
  if (!Array.isArray(raw) || raw.length > usageEventBatchBody.maxItems) {
    const whole = validateBatch({ body: raw });
    throw AppError.validation(whole.ok ? [] : whole.items);
  }
  const receivedAt = usage.now();
  // An event id deduplicates within its tenant: items of two users with one id are two events.
  const seen = new Set<string>();
  const results = await Promise.all(raw.map((item, index) => prepareItem(usage, item, index, receivedAt)));
  const accepted: AcceptedUsage[] = [];
  const answers = results.map((result, index): BatchResult => {
    if (!('record' in result)) return { index, id: null, status: 'rejected', errors: result };
    const key = `${result.record.event_id}:${result.record.user_id}`;
    if (seen.has(key)) return { index, id: result.record.event_id, status: 'duplicate' };
    seen.add(key);
    accepted.push(result);
    return { index, id: result.record.event_id, status: 'accepted', ...(result.priced === null ? {} : { cost: result.priced.cost, cost_source: result.priced.cost_source }) };
  });
  await usage.publish(accepted);
  return answers;
}

async function prepareItem(usage: UsageService, item: PyValue, index: number, receivedAt: number): Promise<AcceptedUsage | ValidationItem[]> {
  const at = (items: readonly ValidationItem[]) => items.map((i) => ({ ...i, loc: ['body', index, ...i.loc.slice(1)] }));
  const checked = validateEvent({ body: item });
  if (!checked.ok) return at(checked.items);
  try {
    const prepared = await usage.prepare(checked.value.body, receivedAt);
    return Array.isArray(prepared) ? at(prepared) : (prepared as AcceptedUsage);
  } catch (error) {
    // Refusals of one item's session reject that item, never the whole batch.
    if (error instanceof AppError && (error.code === 'NOT_FOUND' || error.code === 'CONFLICT')) {
      return at([{ type: 'value_error', loc: ['body', 'session_id'], msg: `Value error, ${error.message}`, input: checked.value.body.session_id, ctx: { error: {} } }]);
    }
    throw error;
  }
}

/** Stored unit costs are per unit; an LLM's is shown per 1,000 tokens, as the replaced service showed it ("0.00086"). */
export function displayedUnitCost(eventType: string, unitCost: string): string {
  return eventType === 'llm_tokens' ? new Exact(unitCost).times(1000).toFixed() : unitCost;
}
