import { describe, expect, it } from 'vitest';
import { withSignal } from '../abortable.ts';
import { abortableReads } from './abortable-reads.ts';
import type { ClickHouseClient } from './client.ts';

type Params = { query: string; abort_signal?: AbortSignal; query_id?: string; query_params?: Record<string, unknown> };

function recordingClient() {
  const calls: Params[] = [];
  let finish = () => {};
  const client = {
    query: (params: Params) => {
      calls.push(params);
      return new Promise<void>((resolve) => (finish = resolve));
    },
    command: async (params: Params) => void calls.push(params),
    insert: async (params: Params) => void calls.push(params),
  } as unknown as ClickHouseClient;
  return { client, calls, finish: () => finish() };
}

describe('abortableReads', () => {
  it('hands a read the signal of the request it runs for, and leaves reads outside a request as they are', async () => {
    const { client, calls, finish } = recordingClient();
    const reads = abortableReads({ client, database: 'db', embedded: true, cluster: null });
    const request = new AbortController();
    const inRequest = withSignal(request.signal, () => reads.client.query({ query: 'SELECT 1' }));
    finish();
    await inRequest;
    const outside = reads.client.query({ query: 'SELECT 2' });
    finish();
    await outside;
    expect(calls.map((call) => call.abort_signal)).toEqual([request.signal, undefined]);
  });

  it('on a server, kills the query by its id when the request’s client goes away', async () => {
    const { client, calls } = recordingClient();
    const reads = abortableReads({ client, database: 'db', embedded: false, cluster: null });
    const request = new AbortController();
    void withSignal(request.signal, () => reads.client.query({ query: 'SELECT sleep(3)' }));
    const queryId = calls[0]!.query_id;
    expect(queryId).toMatch(/^[0-9a-f-]{36}$/);
    request.abort();
    await new Promise((resolve) => setTimeout(resolve, 1));
    expect(calls[1]).toEqual({
      query: 'KILL QUERY WHERE query_id = {query_id:String} ASYNC',
      query_params: { query_id: queryId },
    });
  });
});
