import { randomUUID } from 'node:crypto';
import { currentSignal } from '../abortable.ts';
import type { ClickHouse, ClickHouseClient } from './client.ts';

const READS = new Set<PropertyKey>(['query', 'command', 'exec']);
const KILL = 'KILL QUERY WHERE query_id = {query_id:String} ASYNC';

/**
 * The same client, each read carrying the signal of the request it runs for (services/shared/abortable.ts)
 * as `abort_signal`, unless it names one: when the request's client goes away the read is cancelled where
 * it is. Waiting for an embedded connection, it leaves the queue (chdb-pool.ts); on a server, the HTTP
 * request is aborted and the query is killed by its id, since a server runs a query on after its client
 * hung up unless told to stop. Reads outside any request (refreshers, the writer) run as before.
 */
export function abortableReads(ch: ClickHouse): ClickHouse {
  const client = new Proxy(ch.client, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      const method = value as (params: Record<string, unknown>) => unknown;
      if (!READS.has(property)) return method.bind(target);
      return (params: Record<string, unknown>) => {
        const signal = (params.abort_signal as AbortSignal | undefined) ?? currentSignal();
        if (signal === undefined) return method.call(target, params);
        if (ch.embedded) return method.call(target, { ...params, abort_signal: signal });
        const queryId = (params.query_id as string | undefined) ?? randomUUID();
        const kill = () =>
          // Best effort: a query the kill misses still ends at the reads' max_execution_time.
          void target.command({ query: KILL, query_params: { query_id: queryId } }).catch(() => undefined);
        signal.addEventListener('abort', kill, { once: true });
        const settled = Promise.resolve(method.call(target, { ...params, abort_signal: signal, query_id: queryId }));
        void settled.finally(() => signal.removeEventListener('abort', kill)).catch(() => undefined);
        return settled;
      };
    },
  }) as ClickHouseClient;
  return { ...ch, client };
}
