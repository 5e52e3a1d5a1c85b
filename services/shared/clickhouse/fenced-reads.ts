import { currentSignal, untilAborted } from '../abortable.ts';
import type { ClickHouse, ClickHouseClient } from './client.ts';

const READS = new Set<PropertyKey>(['query', 'command', 'exec']);

/**
 * The same client, its statements run once `fence` resolves: in the embedded mode a read waits until
 * the journal stored what was acknowledged before it, so a read after a 201 sees what the 201 said was
 * kept. The writer's own reads (the stored-id lookup) use the client without it, or they would wait for
 * themselves. A read whose request's client went away (its `abort_signal`, or the request's) stops
 * waiting. Closing either closes the one client.
 */
export function fencedReads(ch: ClickHouse, fence: () => Promise<unknown>): ClickHouse {
  const client = new Proxy(ch.client, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      const method = value as (...args: unknown[]) => unknown;
      if (!READS.has(property)) return method.bind(target);
      return async (...args: unknown[]) => {
        const params = args[0] as { abort_signal?: AbortSignal } | undefined;
        await untilAborted(fence(), params?.abort_signal ?? currentSignal());
        return method.apply(target, args);
      };
    },
  }) as ClickHouseClient;
  return { ...ch, client };
}
