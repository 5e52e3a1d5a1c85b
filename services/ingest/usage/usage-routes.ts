import { usageEventBatchBody, usageEventBody } from '../../../schemas/http/usage-event.ts';
import { acceptedUsageResponse, usageBatchResponse } from '../../../schemas/http/usage-responses.ts';
import type { WireOf } from '../../../schemas/http/response-parts.ts';
import { AppError } from '../../shared/errors.ts';
import { Exact } from '../../shared/exact-decimal.ts';
import { errorDoc, type Route } from '../../shared/http/define-route.ts';
import { routeGroup } from '../../shared/http/route-group.ts';
import { BATCH_BODY_LIMIT } from '../../shared/http/read-raw-body.ts';
import { compileRequest } from '../../shared/validation/compile-request.ts';
import type { PyValue } from '../../shared/validation/py-value.ts';
import type { AcceptedUsage } from './accepted-usage.ts';
import type { UsageService } from './usage-service.ts';
import type { BatchItemResult } from './usage-batch.ts';

const routes = routeGroup({ tags: ['usage'], access: 'ingest' });
const validateBatch = compileRequest({ body: usageEventBatchBody });

/**
 * compat.md's usage-event object: unit_cost and total_cost are the worker's own when it sent them (as the
 * replaced service echoed them), else as priced at acceptance (an LLM's unit cost per 1,000 tokens, as the
 * replaced service showed it); `cost` and `cost_source` are callmeter's price, which the views will show.
 */
function toUsageResponse({ record, priced }: AcceptedUsage) {
  return {
    id: record.event_id,
    session_id: record.session_id,
    user_id: record.user_id,
    agent_id: record.agent_id,
    provider: record.provider,
    event_type: record.event_type,
    quantity: record.quantity,
    unit_cost:
      record.reported_unit_cost ??
      (priced === null || priced.cost_source === 'unpriced'
        ? null
        : displayedUnitCost(record.event_type, priced.unit_cost)),
    total_cost:
      record.reported_total_cost ?? (priced === null || priced.cost_source === 'unpriced' ? null : priced.cost),
    created_at: record.received_at,
    occurred_at: record.occurred_at,
    model: record.model,
    input_tokens: record.input_tokens,
    output_tokens: record.output_tokens,
    ...(priced === null ? {} : { cost: priced.cost, cost_source: priced.cost_source }),
  };
}

type BatchResult = WireOf<typeof usageBatchResponse.schema>[number];

export function usageRoutes(usage: UsageService): Route[] {
  return [
    routes.post('/api/usage/events', {
      summary: 'Record a usage event (priced by the server from the rate card)',
      status: 201,
      responses: {
        404: errorDoc('Unknown session', 'Session not found'),
        409: errorDoc(
          'The usage occurred (its timestamp, else its receipt) more than the grace (default 1 hour) after its session ended (it is not that call’s), or in a closed month',
          'Session ended at 2026-11-24T10:00:00.000Z; usage at 2026-11-24T11:00:00.001Z is more than 3600 seconds after its end: it takes no more usage',
        ),
        503: { description: 'Not stored: retry' },
      },
      request: { body: usageEventBody },
      response: acceptedUsageResponse,
      handle: async ({ body, tenant }) => toUsageResponse(await usage.accept(body, tenant)),
    }),
    routes.post('/api/usage/events/batch', {
      summary: 'Record up to 1,000 usage events; each is accepted or rejected alone',
      request: { body: usageEventBatchBody },
      rawBody: true,
      bodyLimitBytes: BATCH_BODY_LIMIT,
      pythonJson: true,
      response: usageBatchResponse,
      handle: async ({ rawBody, tenant }) => (await usage.acceptBatch(batchItems(rawBody), tenant)).map(toBatchAnswer),
    }),
  ];
}

/** The batch as a whole: a list of at most maxItems, else the 422 of the batch schema. */
function batchItems(raw: PyValue | undefined): readonly PyValue[] {
  if (Array.isArray(raw) && raw.length <= usageEventBatchBody.maxItems) return raw;
  const whole = validateBatch({ body: raw });
  throw AppError.validation(whole.ok ? [] : whole.items);
}

function toBatchAnswer(result: BatchItemResult): BatchResult {
  const { index } = result;
  if (result.status === 'rejected') return { index, id: null, status: 'rejected', errors: result.errors };
  if (result.status === 'duplicate') return { index, id: result.id, status: 'duplicate' };
  const { record, priced } = result.accepted;
  return {
    index,
    id: record.event_id,
    status: 'accepted',
    ...(priced === null ? {} : { cost: priced.cost, cost_source: priced.cost_source }),
  };
}

/** Stored unit costs are per unit; an LLM's is shown per 1,000 tokens, as the replaced service showed it ("0.00086"). */
export function displayedUnitCost(eventType: string, unitCost: string): string {
  return eventType === 'llm_tokens' ? new Exact(unitCost).times(1000).toFixed() : unitCost;
}
