import { describe, expect, it } from 'vitest';
import type { ClickHouse, ClickHouseClient } from './client.ts';
import { fencedReads } from './fenced-reads.ts';
import { withSignal } from '../abortable.ts';

describe('fencedReads', () => {
  it('runs a statement only once the fence opens, and inserts, pings and closes at once', async () => {
    const calls: string[] = [];
    const client = {
      name: 'the client',
      query: async (params: { query: string }) => void calls.push(`query ${params.query}`),
      insert: async () => void calls.push('insert'),
      ping: async () => void calls.push('ping'),
    } as unknown as ClickHouseClient;
    let open = () => {};
    const fence = new Promise<void>((resolve) => (open = resolve));
    const ch: ClickHouse = { client, database: 'db', embedded: true, cluster: null };
    const fenced = fencedReads(ch, () => fence);

    const query = fenced.client.query({ query: 'SELECT 1' });
    await fenced.client.insert({ table: 't', values: [] });
    await fenced.client.ping();
    expect(calls).toEqual(['insert', 'ping']);
    open();
    await query;
    expect(calls).toEqual(['insert', 'ping', 'query SELECT 1']);
    expect([fenced.database, (fenced.client as unknown as { name: string }).name]).toEqual(['db', 'the client']);
  });
});

describe('fencedReads, when the request’s client goes away', () => {
  it('stops waiting for the fence and never runs the statement', async () => {
    const calls: string[] = [];
    const client = {
      query: async (params: { query: string }) => void calls.push(params.query),
    } as unknown as ClickHouseClient;
    const fenced = fencedReads({ client, database: 'db', embedded: true, cluster: null }, () => new Promise(() => {}));
    const leaving = new AbortController();
    const viaParams = fenced.client.query({ query: 'SELECT 1', abort_signal: leaving.signal });
    const request = new AbortController();
    const viaRequest = withSignal(request.signal, () => fenced.client.query({ query: 'SELECT 2' }));
    leaving.abort();
    request.abort();
    await expect(viaParams).rejects.toThrow(/aborted/);
    await expect(viaRequest).rejects.toThrow(/aborted/);
    expect(calls).toEqual([]);
  });
});
