import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Exact } from '../../services/shared/exact-decimal.ts';
import { call } from '../support/api.ts';
import { startCallmeter, type CallmeterProcess } from '../support/callmeter-process.ts';
import { eventually, oneProcessModes } from '../support/harness.ts';

const USER = 'corrections-a';
const OTHER = 'corrections-b';

interface Summary {
  total_cost: string;
  event_count: number;
  unpriced_event_count: number;
  by_provider: Record<string, string>;
}
interface BreakdownEvent {
  id: string;
  quantity: string;
  total_cost: string;
  weight: number;
  correction: { id: string; kind: string; event_id: string; reverses: string | null; reason: string } | null;
}
interface Breakdown {
  total_cost: string;
  event_count: number;
  events: BreakdownEvent[];
}
interface Correction {
  id: string;
  event_id: string;
  kind: string;
  reason: string;
  created_at: string;
}

const sum = (values: readonly string[]) => values.reduce((total, value) => total.plus(value), new Exact(0)).toFixed();

const MODES = oneProcessModes('corrections');

describe.each(MODES)(
  'corrections on $name: a void or an amend of stored usage is new rows, and every view shows the corrected numbers',
  (mode) => {
    let app: CallmeterProcess;
    let sessionId: string;
    const costs = new Map<string, string>();
    const ids = { stt: '', llm: '', tts: '', unpriced: '' };
    const as = (user: string) => ({ 'x-user-id': user });

    const summary = async (user = USER) =>
      (await call<Summary>(app.url, 'GET', '/api/costs/summary', undefined, as(user))).body;
    const breakdown = async () =>
      (await call<Breakdown>(app.url, 'GET', `/api/sessions/${sessionId}/cost-breakdown`, undefined, as(USER))).body;
    const correct = (eventId: string, kind: 'void' | 'amend', body: unknown, user = USER) =>
      call<Correction>(app.url, 'POST', `/api/usage/events/${eventId}/${kind}`, body, as(user));

    /** Summary, timeline and by-agent agree to the last digit, and the export's rows sum to them. */
    async function expectViewsAgree(total: string, events: number): Promise<void> {
      await eventually(async () => {
        const now = await summary();
        expect(now.total_cost).toBe(total);
        expect(now.event_count).toBe(events);
      });
      // In UTC whole days are read from the rollups; at +05:45 the days' edges are read from the events themselves.
      for (const tz of ['UTC', 'Asia/Kathmandu']) {
        const zoned = (await call<Summary>(app.url, 'GET', `/api/costs/summary?tz=${tz}`, undefined, as(USER))).body;
        expect([zoned.total_cost, zoned.event_count]).toEqual([total, events]);
        const timeline = await call<{ total_cost: string; event_count: number }[]>(
          app.url,
          'GET',
          `/api/costs/timeline?period=daily&tz=${tz}`,
          undefined,
          as(USER),
        );
        expect(sum(timeline.body.map((point) => point.total_cost))).toBe(total);
        expect(timeline.body.reduce((n, point) => n + point.event_count, 0)).toBe(events);
        const byAgent = await call<{ total_cost: string; event_count: number }[]>(
          app.url,
          'GET',
          `/api/costs/by-agent?tz=${tz}`,
          undefined,
          as(USER),
        );
        expect(sum(byAgent.body.map((agent) => agent.total_cost))).toBe(total);
        expect(byAgent.body.reduce((n, agent) => n + agent.event_count, 0)).toBe(events);
      }
      const day = new Date().toISOString().slice(0, 10);
      const exported = await fetch(`${app.url}/api/export/usage?from=${day}&to=${day}&format=jsonl`, {
        headers: as(USER),
      });
      const rows = (await exported.text())
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { cost: string; weight: number });
      expect(sum(rows.map((row) => row.cost))).toBe(total);
      expect(rows.reduce((n, row) => n + row.weight, 0)).toBe(events);
      const card = await breakdown();
      expect(card.total_cost).toBe(total);
      expect(card.event_count).toBe(events);
      expect(sum(card.events.map((event) => event.total_cost))).toBe(total);
    }

    beforeAll(async () => {
      app = await startCallmeter(mode.env());
      const session = await call<{ id: string }>(app.url, 'POST', '/api/sessions/', {
        room_name: 'corrections-room',
        user_id: USER,
        agent_id: 'agent-corrections',
      });
      expect(session.status).toBe(201);
      sessionId = session.body.id;
      const events = {
        stt: { provider: 'deepgram', event_type: 'stt_minutes', quantity: 3 },
        llm: {
          provider: 'openai',
          event_type: 'llm_tokens',
          model: 'gpt-4o-mini',
          input_tokens: 1200,
          output_tokens: 300,
        },
        tts: { provider: 'resemble', event_type: 'tts_characters', usage_data: { character_count: 700 } },
        unpriced: { provider: 'speechmatics-corrections', event_type: 'stt_minutes', quantity: 2 },
      };
      for (const [name, event] of Object.entries(events)) {
        const answer = await call<{ id: string; cost: string }>(app.url, 'POST', '/api/usage/events', {
          session_id: sessionId,
          user_id: USER,
          ...event,
        });
        expect(answer.status).toBe(201);
        ids[name as keyof typeof ids] = answer.body.id;
        costs.set(name, answer.body.cost);
      }
      await expectViewsAgree(sum([...costs.values()]), 4);
    }, 120_000);

    afterAll(async () => {
      await app?.stop();
    });

    it('voids an event: 201 with the correction, it stops counting everywhere, and the breakdown lists both rows with the reason', async () => {
      const voided = await correct(ids.stt, 'void', { reason: 'test call leaked into production' });
      expect(voided.status).toBe(201);
      expect(voided.body).toMatchObject({
        event_id: ids.stt,
        kind: 'void',
        reason: 'test call leaked into production',
      });
      expect(Date.parse(voided.body.created_at)).toBeGreaterThan(0);
      await expectViewsAgree(sum([costs.get('llm')!, costs.get('tts')!, costs.get('unpriced')!]), 3);
      const rows = (await breakdown()).events;
      const original = rows.find((row) => row.id === ids.stt)!;
      expect(original.correction).toBeNull();
      const reversal = rows.find((row) => row.correction?.id === voided.body.id)!;
      expect(reversal).toMatchObject({
        weight: -1,
        total_cost: new Exact(costs.get('stt')!).negated().toFixed(),
        quantity: '-3',
        correction: { kind: 'void', event_id: ids.stt, reverses: ids.stt, reason: 'test call leaked into production' },
      });
    });

    it('refuses a second void, an amend of a voided event, and a correction of a correction’s row, each with a clear 409', async () => {
      const again = await correct(ids.stt, 'void', { reason: 'twice' });
      expect(again.status).toBe(409);
      expect(again.body).toEqual({ detail: expect.stringContaining('was voided already') });
      const amended = await correct(ids.stt, 'amend', { reason: 'too late', quantity: 1 });
      expect(amended.status).toBe(409);
      const reversal = (await breakdown()).events.find((row) => row.weight === -1)!;
      const ofRow = await correct(reversal.id, 'void', { reason: 'undo' });
      expect(ofRow.status).toBe(409);
      expect(ofRow.body).toEqual({ detail: expect.stringContaining('is a row of a correction') });
    });

    it('answers 404 for another tenant’s event, an unknown id or a malformed one, and 422 for a body that changes nothing', async () => {
      expect((await correct(ids.tts, 'void', { reason: 'not mine' }, OTHER)).status).toBe(404);
      expect((await correct('7d1c0b7e-1111-4a1a-9a9a-000000000000', 'void', { reason: 'none' })).status).toBe(404);
      expect((await correct('not-a-uuid', 'void', { reason: 'none' })).status).toBe(404);
      const empty = await correct(ids.tts, 'amend', { reason: 'nothing' });
      expect(empty.status).toBe(422);
      expect((await correct(ids.tts, 'void', {})).status).toBe(422);
      expect((await correct(ids.tts, 'void', { reason: '' })).status).toBe(422);
      expect((await summary(OTHER)).event_count).toBe(0);
    });

    it('amends an event twice: each reverses the row in force and adds one priced at the event’s instant', async () => {
      const quote = async (input: number, output: number) =>
        (
          await call<{ total_cost: string }>(app.url, 'POST', '/api/rates/quote', {
            provider: 'openai',
            event_type: 'llm_tokens',
            model: 'gpt-4o-mini',
            input_tokens: input,
            output_tokens: output,
            user_id: USER,
          })
        ).body.total_cost;
      const first = await correct(ids.llm, 'amend', { reason: 'worker double-counted input', input_tokens: 600 });
      expect(first.status).toBe(201);
      expect(first.body.kind).toBe('amend');
      const afterFirst = await quote(600, 300);
      await expectViewsAgree(sum([afterFirst, costs.get('tts')!, costs.get('unpriced')!]), 3);
      const second = await correct(ids.llm, 'amend', { reason: 'output too', output_tokens: 100 });
      expect(second.status).toBe(201);
      const afterSecond = await quote(600, 100);
      await expectViewsAgree(sum([afterSecond, costs.get('tts')!, costs.get('unpriced')!]), 3);
      // The same amend again (a retry whose answer was lost) changes nothing: a 409, no rows.
      const repeated = await correct(ids.llm, 'amend', { reason: 'output too', output_tokens: 100 });
      expect(repeated.status).toBe(409);
      expect(repeated.body).toEqual({ detail: expect.stringContaining('has these values already') });
      const rows = (await breakdown()).events.filter(
        (row) => row.id === ids.llm || row.correction?.event_id === ids.llm,
      );
      // The event as sent, and per amend a reversal and a replacement.
      expect(rows).toHaveLength(5);
      const replacements = rows.filter((row) => row.correction !== null && row.weight === 1);
      expect(replacements.map((row) => row.total_cost).sort()).toEqual([afterFirst, afterSecond].sort());
      const secondReversal = rows.find((row) => row.correction?.id === second.body.id && row.weight === -1)!;
      expect(secondReversal.correction!.reverses).toBe(
        replacements.find((row) => row.correction!.id === first.body.id)!.id,
      );
      expect(secondReversal.total_cost).toBe(new Exact(afterFirst).negated().toFixed());
    });

    it('takes a voided unpriced event out of the unpriced listing and its count', async () => {
      const listed = async () =>
        (await call<{ provider: string }[]>(app.url, 'GET', '/api/costs/unpriced', undefined, as(USER))).body;
      expect((await listed()).map((row) => row.provider)).toContain('speechmatics-corrections');
      expect((await correct(ids.unpriced, 'void', { reason: 'no such vendor' })).status).toBe(201);
      await eventually(async () => {
        expect((await listed()).map((row) => row.provider)).not.toContain('speechmatics-corrections');
        expect((await summary()).unpriced_event_count).toBe(0);
      });
      expect((await summary()).event_count).toBe(2);
    });
  },
);
