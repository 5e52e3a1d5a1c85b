import { describe, expect, it } from 'vitest';
import type { TextBody } from '../shared/http/text-body.ts';
import { validateHeaderValue } from 'node:http';
import { agentsCsv, csvBody, timelineCsv, wantsCsv } from './csv.ts';

/** The whole text of a streamed CSV. */
async function textOf(body: TextBody): Promise<string> {
  if (typeof body.text === 'string') return body.text;
  let text = '';
  for await (const part of body.text()) text += part;
  return text;
}

const agent = (agent_id: string, agent_name: string) => ({
  agent_id,
  agent_name,
  total_cost: '1.5',
  session_count: 2,
  event_count: 3,
  by_service: [],
});

describe('CSV exports', () => {
  it('writes one line per bucket with a cost column per provider, zeros where a provider had none', async () => {
    const csv = timelineCsv(
      [
        { date: '2026-11-21', total_cost: '0.5', by_provider: { deepgram: '0.5' }, by_service: [], event_count: 1 },
        { date: '2026-11-22', total_cost: '0', by_provider: {}, by_service: [], event_count: 0 },
        { date: '2026-11-23', total_cost: '0.25', by_provider: { resemble: '0.25' }, by_service: [], event_count: 2 },
      ],
      'USD',
    );
    expect(csv.contentType).toBe('text/csv; charset=utf-8');
    expect(await textOf(csv)).toBe(
      'date,total_cost,currency,event_count,cost_deepgram,cost_resemble\r\n2026-11-21,0.5,USD,1,0.5,0\r\n2026-11-22,0,USD,0,0,0\r\n2026-11-23,0.25,USD,2,0,0.25\r\n',
    );
  });

  it('quotes commas and quotes, and defuses formulas in names', async () => {
    expect(await textOf(agentsCsv([agent('a-1', 'Sales, "West"'), agent('a-2', '=HYPERLINK("x")')], 'USD'))).toBe(
      'agent_id,agent_name,total_cost,currency,session_count,event_count\r\na-1,"Sales, ""West""",1.5,USD,2,3\r\na-2,"\'=HYPERLINK(""x"")",1.5,USD,2,3\r\n',
    );
  });

  it('streams a long export in parts of about 64 KiB, letting other work run between them', async () => {
    const providers = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`provider-${i}`, '0.000001']));
    const points = Array.from({ length: 400 }, (_, i) => ({
      date: `day-${i}`,
      total_cost: '0.0005',
      by_provider: providers,
      by_service: [],
      event_count: 500,
    }));
    const body = timelineCsv(points, 'USD');
    if (typeof body.text === 'string') throw new Error('a long export must be streamed');
    let turns = 0;
    const ticker = setInterval(() => (turns += 1), 0);
    const parts: string[] = [];
    for await (const part of body.text()) parts.push(String(part));
    clearInterval(ticker);
    expect(parts.length).toBeGreaterThan(parts.join('').length / (70 * 1024));
    expect(Math.max(...parts.map((part) => part.length))).toBeLessThan(70 * 1024);
    expect(turns).toBeGreaterThan(0);
    expect(parts.join('').split('\r\n')).toHaveLength(402);
  });

  it('answers CSV for format=csv or Accept: text/csv, JSON otherwise', () => {
    expect(wantsCsv('csv', '')).toBe(true);
    expect(wantsCsv(undefined, 'text/csv')).toBe(true);
    expect(wantsCsv(undefined, 'application/json;q=0.5, text/csv')).toBe(true);
    expect(wantsCsv(undefined, 'application/json, text/csv;q=0.5')).toBe(false);
    expect(wantsCsv(undefined, 'text/csv;q=0')).toBe(false);
    expect(wantsCsv(undefined, 'TEXT/CSV; charset=utf-8')).toBe(true);
    expect(wantsCsv('json', 'text/csv')).toBe(false);
    expect(wantsCsv(undefined, '*/*')).toBe(false);
    expect(wantsCsv(undefined, 'text/csvx')).toBe(false);
  });

  it("names the file in a header Node sends, whatever text the tenant's id holds", () => {
    for (const [user, header] of [
      ['tenant-1', 'attachment; filename="statement-tenant-1.csv"'],
      ['a"b', 'attachment; filename="statement-a\\"b.csv"'],
      ['W\u{857b2}', `attachment; filename="statement-W??.csv"; filename*=UTF-8''statement-W%F2%85%9E%B2.csv`],
    ]) {
      const disposition = csvBody(`statement-${user}`, ['a'], []).headers['Content-Disposition']!;
      expect(disposition).toBe(header);
      expect(() => validateHeaderValue('Content-Disposition', disposition)).not.toThrow();
    }
  });
});
