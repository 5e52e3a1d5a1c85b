import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Exact } from '../../services/shared/exact-decimal.ts';
import { call } from '../support/api.ts';
import { startCallmeter, type CallmeterProcess } from '../support/callmeter-process.ts';
import { eventually, oneProcessModes } from '../support/harness.ts';

// After any sequence of usage, voids, amends and a repricing, every view of a tenant equals the exact sum
// of what its events cost now: summary == timeline == by-agent plus no-agent == the calls' breakdowns, in
// money and in events, in a zone of whole hours and one of quarter hours.

const DAY_MS = 86_400_000;
const UNPRICED = 'invariants-unpriced';
const PRICE_PER_MINUTE = '0.01';

type Kind = 'stt' | 'tts' | 'llm' | 'unpriced';
type Command =
  | {
      readonly type: 'post';
      readonly session: 0 | 1;
      readonly kind: Kind;
      readonly n: number;
      readonly hoursAgo: number;
    }
  | { readonly type: 'void'; readonly pick: number }
  | { readonly type: 'amend'; readonly pick: number; readonly n: number }
  | { readonly type: 'price' };

/** One event as the model keeps it: what it costs now, whether it still counts. */
interface Modelled {
  readonly id: string;
  readonly session: 0 | 1;
  readonly kind: Kind;
  quantity: number;
  cost: Exact;
  voided: boolean;
}

const command: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      type: fc.constant('post' as const),
      session: fc.constantFrom(0 as const, 1 as const),
      kind: fc.constantFrom<Kind>('stt', 'tts', 'llm', 'unpriced'),
      n: fc.integer({ min: 1, max: 60 }),
      // Half of them now: the views read the current quarter hour (and a zone's unaligned edges) from the events.
      hoursAgo: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 60 })),
    }),
  },
  { weight: 2, arbitrary: fc.record({ type: fc.constant('void' as const), pick: fc.nat() }) },
  {
    weight: 2,
    arbitrary: fc.record({ type: fc.constant('amend' as const), pick: fc.nat(), n: fc.integer({ min: 1, max: 60 }) }),
  },
  { weight: 1, arbitrary: fc.constant({ type: 'price' as const }) },
);

/** What a usage body (or an amend) says for `n` units of `kind`. */
function amounts(kind: Kind, n: number): Record<string, unknown> {
  if (kind === 'llm') return { input_tokens: n * 40, output_tokens: n * 5 };
  if (kind === 'tts') return { quantity: n * 10 };
  return { quantity: n };
}
const PROVIDERS: Record<Kind, Record<string, unknown>> = {
  stt: { provider: 'deepgram', event_type: 'stt_minutes' },
  tts: { provider: 'resemble', event_type: 'tts_characters' },
  llm: { provider: 'openai', event_type: 'llm_tokens', model: 'gpt-4o-mini' },
  unpriced: { provider: UNPRICED, event_type: 'stt_minutes' },
};

const MODES = oneProcessModes('invariants').map((mode, i) => ({ ...mode, seed: 33_007 + i }));

describe.each(MODES)('money invariants with corrections on $name', (mode) => {
  let app: CallmeterProcess;
  let run = 0;

  beforeAll(async () => {
    app = await startCallmeter(mode.env());
  }, 120_000);

  afterAll(async () => {
    await app?.stop();
  });

  const settle = <T>(check: () => Promise<T>) => eventually(check, 30_000, 100);

  it('keeps summary, timeline, by-agent and breakdowns equal to the model after any sequence', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 4, maxLength: 12 }), async (commands) => {
        const user = `invariants-${run++}`;
        const as = { 'x-user-id': user };
        const sessions: string[] = [];
        for (const agent of ['invariants-agent', null]) {
          const answer = await call<{ id: string }>(app.url, 'POST', '/api/sessions/', {
            room_name: `invariants-room-${agent ?? 'none'}`,
            user_id: user,
            agent_id: agent,
          });
          expect(answer.status).toBe(201);
          sessions.push(answer.body.id);
        }
        const events: Modelled[] = [];
        let priced = false;
        const costOf = async (kind: Kind, n: number) => {
          if (kind === 'unpriced') return priced ? new Exact(PRICE_PER_MINUTE).times(n) : new Exact(0);
          const quote = await call<{ total_cost: string }>(app.url, 'POST', '/api/rates/quote', {
            ...PROVIDERS[kind],
            ...amounts(kind, n),
            user_id: user,
          });
          return new Exact(quote.body.total_cost);
        };
        const counted = () => events.filter((event) => !event.voided);
        const total = (list: readonly Modelled[]) => Exact.sum(0, ...list.map((event) => event.cost)).toFixed();
        /** Every view agrees with the model, in money and in events. */
        const expectViews = async () =>
          settle(async () => {
            const get = async <T>(path: string) => (await call<T>(app.url, 'GET', path, undefined, as)).body;
            const expected = total(counted());
            // A range of unaligned ends: its partial quarter hours are read from the events themselves.
            const start = new Date(Date.now() - 3 * DAY_MS - 7 * 60_000).toISOString();
            const end = new Date(Date.now() + 7 * 60_000).toISOString();
            const ranged = `start_date=${encodeURIComponent(start)}&end_date=${encodeURIComponent(end)}`;
            for (const path of [`/api/costs/timeline?period=daily&${ranged}`, `/api/costs/by-agent?${ranged}`]) {
              const points = await get<{ total_cost: string; event_count: number }[]>(path);
              const own = path.includes('by-agent') ? counted().filter((event) => event.session === 0) : counted();
              expect([path, Exact.sum(0, ...points.map((point) => point.total_cost)).toFixed()]).toEqual([
                path,
                total(own),
              ]);
              expect(points.reduce((n, point) => n + point.event_count, 0)).toBe(own.length);
            }
            for (const tz of ['UTC', 'Asia/Kathmandu']) {
              const summary = await get<{ total_cost: string; event_count: number }>(`/api/costs/summary?tz=${tz}`);
              expect([tz, summary.total_cost, summary.event_count]).toEqual([tz, expected, counted().length]);
              const timeline = await get<{ total_cost: string; event_count: number }[]>(
                `/api/costs/timeline?period=daily&tz=${tz}`,
              );
              expect(Exact.sum(0, ...timeline.map((point) => point.total_cost)).toFixed()).toBe(expected);
              expect(timeline.reduce((n, point) => n + point.event_count, 0)).toBe(counted().length);
              const byAgent = await get<{ total_cost: string; event_count: number }[]>(`/api/costs/by-agent?tz=${tz}`);
              const withAgent = counted().filter((event) => event.session === 0);
              expect(Exact.sum(0, ...byAgent.map((agent) => agent.total_cost)).toFixed()).toBe(total(withAgent));
              expect(byAgent.reduce((n, agent) => n + agent.event_count, 0)).toBe(withAgent.length);
            }
            for (const [index, id] of sessions.entries()) {
              const own = counted().filter((event) => event.session === index);
              const breakdown = await get<{
                total_cost: string;
                event_count: number;
                events: { total_cost: string }[];
              }>(`/api/sessions/${id}/cost-breakdown`);
              expect([breakdown.total_cost, breakdown.event_count]).toEqual([total(own), own.length]);
              expect(Exact.sum(0, ...breakdown.events.map((event) => event.total_cost)).toFixed()).toBe(total(own));
            }
          });
        /** A correction of an event acknowledged a moment ago: a 404 until it is stored. */
        const correct = (id: string, kind: 'void' | 'amend', body: Record<string, unknown>) =>
          settle(async () => {
            const answer = await call(app.url, 'POST', `/api/usage/events/${id}/${kind}`, body, as);
            expect(answer.status).not.toBe(404);
            return answer;
          });

        for (const step of commands) {
          if (step.type === 'post') {
            const answer = await call<{ id: string; cost: string }>(app.url, 'POST', '/api/usage/events', {
              session_id: sessions[step.session],
              user_id: user,
              ...PROVIDERS[step.kind],
              ...amounts(step.kind, step.n),
              timestamp: new Date(Date.now() - step.hoursAgo * 3_600_000).toISOString(),
            });
            expect(answer.status).toBe(201);
            events.push({
              id: answer.body.id,
              session: step.session,
              kind: step.kind,
              quantity: step.n,
              cost: await costOf(step.kind, step.n),
              voided: false,
            });
            continue;
          }
          if (step.type === 'price') {
            if (priced) continue;
            // A repricing reads what is stored: the model's events first.
            await expectViews();
            const rate = await call(app.url, 'POST', '/api/rates', {
              user_id: user,
              provider: UNPRICED,
              event_type: 'stt_minutes',
              price: PRICE_PER_MINUTE,
              effective_from: new Date(Date.now() - 4 * DAY_MS).toISOString(),
            });
            expect(rate.status).toBe(201);
            priced = true;
            await settle(async () => {
              const quote = await call<{ cost_source: string }>(app.url, 'POST', '/api/rates/quote', {
                ...PROVIDERS.unpriced,
                quantity: 1,
                user_id: user,
              });
              expect(quote.body.cost_source).toBe('computed');
            });
            const waiting = counted().filter((event) => event.kind === 'unpriced');
            const answer = await call<{ events: number; new_total: string }>(app.url, 'POST', '/api/rates/reprice', {
              user_id: user,
              from: new Date(Date.now() - 4 * DAY_MS).toISOString(),
              to: new Date(Date.now() + 60_000).toISOString(),
            });
            for (const event of waiting) event.cost = await costOf('unpriced', event.quantity);
            expect([answer.status, answer.body.events, answer.body.new_total]).toEqual([
              200,
              waiting.length,
              total(waiting),
            ]);
            continue;
          }
          if (events.length === 0) continue;
          const target = events[step.pick % events.length]!;
          if (step.type === 'void') {
            const answer = await correct(target.id, 'void', { reason: 'invariants' });
            expect(answer.status).toBe(target.voided ? 409 : 201);
            target.voided = true;
            continue;
          }
          const answer = await correct(target.id, 'amend', { reason: 'invariants', ...amounts(target.kind, step.n) });
          // An amend to the values the event has already changes nothing: a 409, as a second void is.
          const unchanged = target.voided || target.quantity === step.n;
          expect(answer.status).toBe(unchanged ? 409 : 201);
          if (unchanged) continue;
          target.quantity = step.n;
          target.cost = await costOf(target.kind, step.n);
        }
        await expectViews();
      }),
      { seed: mode.seed, numRuns: 4, endOnFailure: true },
    );
  }, 600_000);
});
