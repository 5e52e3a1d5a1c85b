import { AppError } from '../errors.ts';
import type { Redis } from './client.ts';

type ScriptCommand = (...keysThenArgs: (string | number)[]) => Promise<unknown>;

/**
 * A Lua script defined on each client it runs on as an ioredis command (`defineCommand`): ioredis runs
 * it by its SHA, sending the source once per connection and again after a server restart (NOSCRIPT).
 * Scripts run atomically: that is the point of them. `name` must not be a Redis command's.
 */
export class LuaScript {
  private readonly definedOn = new WeakSet<Redis>();

  constructor(
    private readonly name: string,
    private readonly numberOfKeys: number,
    private readonly lua: string,
  ) {}

  run(redis: Redis, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    if (!this.definedOn.has(redis)) {
      redis.defineCommand(this.name, { numberOfKeys: this.numberOfKeys, lua: this.lua });
      // An auto-pipeline copies the client's scripts when it is created: one already open in this
      // turn lacks a command defined now ("pipeline[functionName] is not a function"), and ioredis
      // then throws inside a callback, which ends the process. So the scripts are sent on their own.
      redis.options.autoPipeliningIgnoredCommands = [...(redis.options.autoPipeliningIgnoredCommands ?? []), this.name];
      this.definedOn.add(redis);
    }
    return (redis as unknown as Record<string, ScriptCommand>)[this.name]!(...keys, ...args);
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
