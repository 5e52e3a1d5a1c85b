import { createHash } from 'node:crypto';
import { AppError } from '../../shared/errors.ts';
import type { Redis } from '../../shared/redis/client.ts';

/**
 * A Lua script run by its SHA, loaded on first use or after a server restart (NOSCRIPT), so the
 * source crosses the network once per server. Scripts run atomically: that is the point of them.
 */
export class LuaScript {
  private readonly sha: string;

  constructor(private readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  async run(redis: Redis, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    try {
      return await redis.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return redis.eval(this.source, keys.length, ...keys, ...args);
    }
  }
}

/** A Redis failure is an unavailable dependency (503), not a bug in the request (500). */
export async function unavailableOnError<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw AppError.of('DEPENDENCY_UNAVAILABLE', `${what} unavailable`, { cause: error });
  }
}
