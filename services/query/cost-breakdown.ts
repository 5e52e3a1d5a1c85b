import type { ClickHouse } from '../shared/clickhouse/client.ts';
import { AppError } from '../shared/errors.ts';
import { Exact } from '../shared/exact-decimal.ts';
import type { LiveUsageStore } from '../shared/redis/live-usage.ts';
import { CostTally, money } from './cost-tally.ts';
import { pendingLiveEntries } from './live-cost.ts';
import {
  sessionEvents,
  sessionHead,
  sessionLines,
  type SessionHead,
  type StoredUsageEvent,
} from './queries/session-costs.ts';
import { itemKey, partsBySessionItem } from './queries/usage-parts.ts';

/** The most events one breakdown lists; its totals always cover all of them. */
export const MAX_LISTED_EVENTS = 10_000;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * GET /api/sessions/{session_id}/cost-breakdown: compat.md's keys first (session_id, total_cost,
 * events oldest first, cost_by_type), then the dashboard's table (items: one row per provider and
 * service), the currency, and whether the call is still live. With x-user-id, another user's
 * session is not found.
 */
export async function costBreakdown(
  ch: ClickHouse,
  liveUsage: LiveUsageStore,
  sessionId: string,
  callerId: string | null,
) {
  return breakdownOf(ch, liveUsage, await findSession(ch, sessionId, callerId));
}

/** The session a cost answer is of; with x-user-id, another user's session is not found. */
export async function findSession(ch: ClickHouse, sessionId: string, callerId: string | null): Promise<SessionHead> {
  const session = UUID.test(sessionId) ? await sessionHead(ch, sessionId.toLowerCase()) : null;
  if (session === null || (callerId !== null && callerId !== session.user_id))
    throw AppError.of('NOT_FOUND', 'Session not found');
  return session;
}

/** The breakdown of a session found. */
export async function breakdownOf(ch: ClickHouse, liveUsage: LiveUsageStore, session: SessionHead) {
  const [lines, parts] = await Promise.all([
    sessionLines(ch, session.user_id, session.id),
    partsBySessionItem(ch, session.user_id, session.id),
  ]);
  const first = Math.min(...lines.map((line) => Number(line.first_at)));
  const last = Math.max(...lines.map((line) => Number(line.last_at)));
  const live = session.status === 'ACTIVE';
  // Read after the lines: an event stored since is either listed (then left out of the pending ones,
  // so at worst it shows on the next read) or pending, never both in the lines and pending.
  const [events, entries] = await Promise.all([
    lines.length === 0 ? [] : sessionEvents(ch, session.user_id, session.id, first, last, MAX_LISTED_EVENTS + 1),
    live ? liveUsage.read(session.id) : [],
  ]);
  const pending = await pendingLiveEntries(
    ch,
    session.user_id,
    entries,
    new Set(events.map((event) => event.event_key)),
    events.length <= MAX_LISTED_EVENTS,
  );
  const costLines = [
    ...lines,
    ...pending.map((entry) => ({ ...entry, cost_sum: entry.cost, quantity_sum: entry.quantity, events_sum: '1' })),
  ];
  // Usage of a call in progress that is not stored yet has no parts yet: one `pending` part per item, so that an item's parts still add up to it.
  for (const entry of pending) {
    const key = itemKey(entry.provider, entry.event_type, entry.service);
    const list = parts.get(key) ?? [];
    const known = list.find((part) => part.dimension === 'pending' && part.unit === entry.unit);
    const summed = {
      dimension: 'pending' as const,
      unit: entry.unit,
      quantity: money(new Exact(known?.quantity ?? 0).plus(entry.quantity)),
      cost: money(new Exact(known?.cost ?? 0).plus(entry.cost)),
    };
    parts.set(key, [...list.filter((part) => part !== known), summed]);
  }
  const total = new CostTally();
  const byType = new Map<string, CostTally>();
  const items = new Map<string, CostTally>();
  for (const line of costLines) {
    total.add(line);
    tallyOf(byType, line.event_type).add(line);
    tallyOf(items, `${line.provider}\u0000${line.service}`).add(line);
  }
  return {
    session_id: session.id,
    total_cost: money(total.totalCost),
    events: events.slice(0, MAX_LISTED_EVENTS).map(toEventJson),
    cost_by_type: Object.fromEntries(
      [...byType].sort(([a], [b]) => (a < b ? -1 : 1)).map(([type, tally]) => [type, money(tally.totalCost)]),
    ),
    currency: lines[0]?.currency ?? 'USD',
    live,
    event_count: total.events,
    events_truncated: events.length > MAX_LISTED_EVENTS,
    items: [...items].flatMap(([key, tally]) =>
      tally.byService().map((row) => {
        const provider = key.split('\u0000')[0]!;
        return {
          provider,
          service: row.service,
          event_type: row.event_type,
          quantity: row.quantity,
          unit: row.unit,
          cost: row.cost,
          parts: parts.get(itemKey(provider, row.event_type, row.service)) ?? [],
        };
      }),
    ),
  };
}

function tallyOf(tallies: Map<string, CostTally>, key: string): CostTally {
  let tally = tallies.get(key);
  if (tally === undefined) tallies.set(key, (tally = new CostTally()));
  return tally;
}

/**
 * A stored event in the usage-event object of compat.md, priced: unit_cost and total_cost are callmeter's
 * (an LLM's unit cost per 1,000 tokens, as the replaced service showed it: "0.00086" for the blended rate);
 * `components` are the priced parts, each at its exact rate.
 */
function toEventJson(event: StoredUsageEvent) {
  const optional = (value: string | null) => (value === null ? null : money(value));
  return {
    id: event.event_key,
    session_id: event.session_key,
    user_id: event.user_id,
    agent_id: event.agent_id === '' ? null : event.agent_id,
    provider: event.provider,
    event_type: event.event_type,
    quantity: money(event.quantity),
    unit_cost:
      event.event_type === 'llm_tokens' ? money(new Exact(event.unit_cost).times(1000)) : money(event.unit_cost),
    total_cost: money(event.cost),
    created_at: new Date(Number(event.received_ms)).toISOString(),
    occurred_at: new Date(Number(event.occurred_ms)).toISOString(),
    model: event.model === '' ? null : event.model,
    input_tokens: event.input_tokens === null ? null : Number(event.input_tokens),
    output_tokens: event.output_tokens === null ? null : Number(event.output_tokens),
    service: event.service,
    unit: event.unit,
    cost_source: event.cost_source,
    reported_unit_cost: optional(event.reported_unit_cost),
    reported_total_cost: optional(event.reported_total_cost),
    components: event.parts.map(([dimension, quantity, unit, price, per, cost, rate_id]) => ({
      dimension,
      quantity: money(quantity),
      unit,
      price: money(price),
      per: money(per),
      cost: money(cost),
      rate_id,
    })),
    weight: event.weight < 0 ? (-1 as const) : (1 as const),
    correction:
      event.correction_key === null || event.correction_kind === ''
        ? null
        : {
            id: event.correction_key,
            kind: event.correction_kind,
            event_id: event.correction_of_key!,
            reverses: event.reverses_key,
            reason: event.correction_reason,
            created_at: new Date(Number(event.correction_ms)).toISOString(),
          },
  };
}
