import { AppError } from '../errors.ts';
import type { Redis } from './client.ts';

type ScriptCommand = (...keysThenArgs: (string | number)[]) => Promise<unknown>;

/**
 * A Lua script defined on each client it runs on as an ioredis command (`defineCommand`): ioredis runs
 * it by its SHA, sending the source once per connection and again after a server restart (NOSCRIPT).
 * Scripts run atomically: that is the point of them. `name` must not be a Redis command's.
 */
export class LuaScript {
  /** Per client: true once usable, else the wait for the auto-pipelines opened before it was defined. */
  private readonly readyOn = new WeakMap<Redis, true | Promise<void>>();

  constructor(
    private readonly name: string,
    private readonly numberOfKeys: number,
    private readonly lua: string,
  ) {}

  run(redis: Redis, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    const send = () => (redis as unknown as Record<string, ScriptCommand>)[this.name]!(...keys, ...args);
    const ready = this.readyOn.get(redis) ?? this.define(redis);
    return ready === true ? send() : ready.then(send);
  }

  /**
   * An auto-pipeline copies the client's scripts when it is created: one opened earlier in this turn
   * lacks a command defined now ("pipeline[functionName] is not a function"), and ioredis then throws
   * inside a callback, which ends the process. Such a pipeline is sent on the next setImmediate; the
   * script's first calls on this client wait for that, and from then on go into the auto-pipelines
   * like every other command, in the order they were issued.
   */
  private define(redis: Redis): Promise<void> {
    redis.defineCommand(this.name, { numberOfKeys: this.numberOfKeys, lua: this.lua });
    const ready = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      this.readyOn.set(redis, true);
    });
    this.readyOn.set(redis, ready);
    return ready;
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
