import { usageEventBody, type UsageEventBody } from '../../../schemas/http/usage-event.ts';
import { AppError, type ValidationItem } from '../../shared/errors.ts';
import { compileRequest } from '../../shared/validation/compile-request.ts';
import type { PyValue } from '../../shared/validation/py-value.ts';
import type { AcceptedUsage } from './accepted-usage.ts';

/** One item of a batch, as data: accepted (with its record and price), a duplicate of an earlier item, or rejected. */
export type BatchItemResult =
  | { readonly index: number; readonly status: 'accepted'; readonly accepted: AcceptedUsage }
  | { readonly index: number; readonly status: 'duplicate'; readonly id: string }
  | { readonly index: number; readonly status: 'rejected'; readonly errors: readonly ValidationItem[] };

/** What a batch needs of the usage service: one event's record or its 422 items, and the publish of the accepted. */
export interface BatchSteps {
  readonly prepare: (body: UsageEventBody, receivedAtMs: number) => Promise<AcceptedUsage | readonly ValidationItem[]>;
  readonly publish: (accepted: readonly AcceptedUsage[]) => Promise<void>;
}

const validateEvent = compileRequest({ body: usageEventBody });

/**
 * Each item is validated and checked against its session alone, at one receipt time; the accepted
 * ones are published together, answered once durable. An event id deduplicates within its tenant:
 * items of two users with one id are two events.
 */
export async function acceptUsageBatch(
  steps: BatchSteps,
  items: readonly PyValue[],
  receivedAtMs: number,
): Promise<BatchItemResult[]> {
  const prepared = await Promise.all(items.map((item, index) => prepareItem(steps, item, index, receivedAtMs)));
  const seen = new Set<string>();
  const results = prepared.map((result, index): BatchItemResult => {
    if (!('record' in result)) return { index, status: 'rejected', errors: result };
    const key = `${result.record.event_id}:${result.record.user_id}`;
    if (seen.has(key)) return { index, status: 'duplicate', id: result.record.event_id };
    seen.add(key);
    return { index, status: 'accepted', accepted: result };
  });
  await steps.publish(results.flatMap((result) => (result.status === 'accepted' ? [result.accepted] : [])));
  return results;
}

async function prepareItem(
  steps: BatchSteps,
  item: PyValue,
  index: number,
  receivedAtMs: number,
): Promise<AcceptedUsage | readonly ValidationItem[]> {
  const at = (items: readonly ValidationItem[]) =>
    items.map((i) => ({ ...i, loc: ['body', index, ...i.loc.slice(1)] }));
  const checked = validateEvent({ body: item });
  if (!checked.ok) return at(checked.items);
  try {
    const prepared = await steps.prepare(checked.value.body, receivedAtMs);
    return Array.isArray(prepared) ? at(prepared) : (prepared as AcceptedUsage);
  } catch (error) {
    // Refusals of one item's session (or, for a bound credential, of its tenant) reject that item, never the whole batch.
    if (error instanceof AppError && (error.code === 'NOT_FOUND' || error.code === 'CONFLICT')) {
      return at([
        {
          type: 'value_error',
          loc: ['body', 'session_id'],
          msg: `Value error, ${error.message}`,
          input: checked.value.body.session_id,
          ctx: { error: {} },
        },
      ]);
    }
    if (error instanceof AppError && error.code === 'FORBIDDEN') {
      return at([
        { type: 'forbidden', loc: ['body', 'user_id'], msg: error.message, input: checked.value.body.user_id },
      ]);
    }
    throw error;
  }
}
