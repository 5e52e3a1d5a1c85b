import { describe, expect, it } from 'vitest';
import type { BudgetRecord } from '../../schemas/records/budget.ts';
import type { ClickHouse } from '../shared/clickhouse/client.ts';
import { createLogger } from '../shared/logger.ts';
import type { Budgets } from '../domain/budgets/index.ts';
import { messageIdOf, type WebhookEvent } from '../domain/webhooks/index.ts';
import { BudgetEvaluation } from './budget-evaluation.ts';

const budget: BudgetRecord = {
  id: '0b6c9a52-4f7e-4c1e-9d8a-2f6d1e1c0a01',
  name: 'daily',
  user_id: 'tenant-1',
  agent_id: null,
  per_call: false,
  amount: '10',
  period: 'day',
  time_zone: 'UTC',
  thresholds: ['50%'],
  action: 'notify',
  filter: {},
  created_at: '2026-11-01T00:00:00.000Z',
  updated_at: '2026-11-01T00:00:00.000Z',
  deleted_at: null,
  version: 1,
};

/**
 * A store answering the tenant's spend (the rollup read) and which messages the outbox holds, with the
 * emitted messages added to it as the outbox would.
 */
function harness(spent: string) {
  const outbox = new Set<string>();
  const emitted: WebhookEvent[] = [];
  const state = { spent, recentCalls: [] as string[], subscribed: true };
  const client = {
    query: async ({ query, query_params }: { query: string; query_params: Record<string, unknown> }) => ({
      json: async () =>
        query.includes('webhook_deliveries')
          ? (query_params.ids as string[]).filter((id) => outbox.has(id)).map((id) => ({ id }))
          : query.includes('DISTINCT')
            ? state.recentCalls.map((session) => ({ session }))
            : query.includes('GROUP BY session')
              ? (query_params.sessions as string[])
                  .filter((session) => state.recentCalls.includes(session))
                  .map((session) => ({ session, agent_id: '', cost: state.spent }))
              : [{ agent_id: '', provider: 'deepgram', service: 'stt', cost: state.spent }],
    }),
  };
  const reads = { client, database: 'db', cluster: null, embedded: true } as unknown as ClickHouse;
  const emit = async (event: WebhookEvent) => {
    const id = messageIdOf(event.type, event.user_id, event.idempotency_key);
    if (!state.subscribed) return { message_id: id, endpoints: 0, duplicate: false };
    const duplicate = outbox.has(id);
    outbox.add(id);
    if (!duplicate) emitted.push(event);
    return { message_id: id, endpoints: duplicate ? 0 : 1, duplicate };
  };
  return { reads, emit, emitted, state };
}

/** A registry over a list the test changes; `changes` grows with every budget added and every version. */
const registry = (list: BudgetRecord[]) =>
  ({
    all: () => list,
    get changes() {
      return list.reduce((sum, budget) => sum + budget.version, list.length * 1_000);
    },
  }) as unknown as Budgets;

describe('budget evaluation', () => {
  const log = createLogger('silent');
  let nowMs = Date.parse('2026-11-27T12:00:00Z');
  const now = () => nowMs;

  it('fires each threshold and the exhaustion once, and resolves an exhausted budget when its period resets', async () => {
    const { reads, emit, emitted, state } = harness('12');
    const evaluation = new BudgetEvaluation({ budgets: registry([budget]), reads, emit, log, now });
    evaluation.touched({ tenants: ['tenant-1'], sessions: [] });
    await evaluation.evaluate();
    evaluation.touched({ tenants: ['tenant-1'], sessions: [] });
    await evaluation.evaluate();
    expect(emitted.map((event) => [event.type, event.data.threshold, event.data.spent])).toEqual([
      ['budget.threshold_crossed', '50%', '12'],
      ['budget.exhausted', '100%', '12'],
    ]);
    // The next day: nothing spent yet, and yesterday's exhaustion is resolved, once.
    nowMs = Date.parse('2026-11-28T00:05:00Z');
    state.spent = '0';
    await evaluation.evaluate();
    await evaluation.evaluate();
    expect(emitted.slice(2).map((event) => [event.type, event.data.reason, event.data.period_start])).toEqual([
      ['budget.resolved', 'period_reset', '2026-11-27T00:00:00.000Z'],
    ]);
  });

  it('resolves a budget raised above its spend, and fires its percentage thresholds anew at the new amount', async () => {
    nowMs = Date.parse('2026-11-27T12:00:00Z');
    const { reads, emit, emitted } = harness('12');
    const list = [budget];
    const evaluation = new BudgetEvaluation({ budgets: registry(list), reads, emit, log, now });
    evaluation.touched({ tenants: ['tenant-1'], sessions: [] });
    await evaluation.evaluate();
    expect(emitted.map((event) => event.type)).toEqual(['budget.threshold_crossed', 'budget.exhausted']);
    list[0] = { ...budget, amount: '20', version: 2 };
    await evaluation.evaluate();
    expect(
      emitted.slice(2).map((event) => [event.type, event.data.reason, event.data.threshold, event.data.amount]),
    ).toEqual([
      // 50 % of 20 is 10, passed by 12: a crossing of the new amount.
      ['budget.threshold_crossed', undefined, '50%', '20'],
      ['budget.resolved', 'raised', null, '20'],
    ]);
  });

  it('starts without resolving a period that was never exhausted', async () => {
    nowMs = Date.parse('2026-11-27T12:00:00Z');
    const { reads, emit, emitted } = harness('1');
    const evaluation = new BudgetEvaluation({ budgets: registry([budget]), reads, emit, log, now });
    await evaluation.evaluate();
    evaluation.touched({ tenants: ['tenant-1'], sessions: [] });
    await evaluation.evaluate();
    expect(emitted).toEqual([]);
  });

  it('evaluates a budget as soon as it learns of it, and a new per-call cap against the calls stored lately', async () => {
    nowMs = Date.parse('2026-11-27T12:00:00Z');
    const { reads, emit, emitted, state } = harness('12');
    state.recentCalls = ['call-1'];
    const list: BudgetRecord[] = [];
    const evaluation = new BudgetEvaluation({ budgets: registry(list), reads, emit, log, now });
    await evaluation.evaluate();
    // Created after the usage was stored, and no usage since: nothing is announced, it fires anyway.
    list.push(budget, { ...budget, id: 'cap-1', per_call: true, period: 'none', amount: '5', thresholds: ['100%'] });
    await evaluation.evaluate();
    await evaluation.evaluate();
    expect(emitted.map((event) => [event.type, event.data.session_id ?? null])).toEqual([
      ['budget.threshold_crossed', null],
      ['budget.exhausted', null],
      ['budget.threshold_crossed', 'call-1'],
      ['call.cap_reached', 'call-1'],
    ]);
  });

  it('fires again on a later turn what nobody was subscribed to when it was first reached', async () => {
    nowMs = Date.parse('2026-11-27T12:00:00Z');
    const { reads, emit, emitted, state } = harness('12');
    state.subscribed = false;
    const evaluation = new BudgetEvaluation({ budgets: registry([budget]), reads, emit, log, now });
    await evaluation.evaluate();
    expect(emitted).toEqual([]);
    state.subscribed = true;
    evaluation.touched({ tenants: ['tenant-1'], sessions: [] });
    await evaluation.evaluate();
    expect(emitted.map((event) => event.type)).toEqual(['budget.threshold_crossed', 'budget.exhausted']);
  });

  it('walks the budgets again only when one was learned of or changed, or a period ended', async () => {
    nowMs = Date.parse('2026-11-27T12:00:00Z');
    const { reads, emit, emitted, state } = harness('12');
    state.subscribed = true;
    let walks = 0;
    const list = [budget];
    const counted = {
      all: (tenant?: string) => {
        if (tenant === undefined) walks += 1;
        return list;
      },
      get changes() {
        return list[0]!.version;
      },
    } as unknown as Budgets;
    const evaluation = new BudgetEvaluation({ budgets: counted, reads, emit, log, now });
    await evaluation.evaluate();
    await evaluation.evaluate();
    expect(walks).toBe(1);
    list[0] = { ...budget, version: 2 };
    await evaluation.evaluate();
    nowMs = Date.parse('2026-11-28T00:00:01Z');
    state.spent = '0';
    await evaluation.evaluate();
    expect(walks).toBe(3);
    // The day's exhaustion is resolved once its period ended.
    expect(emitted.map((event) => event.type).at(-1)).toBe('budget.resolved');
  });
});
