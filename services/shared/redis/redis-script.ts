import { AppError } from '../errors.ts';
import type { Redis } from 'ioredis';

type ScriptCommand = (...keysThenArgs: (string | number)[]) => Promise<unknown>;

/** The parts of ioredis's (internal) auto-pipelines that a script defined late must be added to. */
interface PendingPipeline {
  _shaToScript: Record<string, unknown>;
  [command: string]: unknown;
}
interface ScriptedRedis {
  readonly scriptsSet: Record<string, { readonly sha: string }>;
  readonly _autoPipelines?: Map<string, PendingPipeline>;
}

/** Every script made, so that a new client defines them all before its first command (defineAll). */
const SCRIPTS = new Set<LuaScript>();

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
  ) {
    SCRIPTS.add(this);
  }

  run(redis: Redis, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    this.defineOn(redis);
    return (redis as unknown as Record<string, ScriptCommand>)[this.name]!(...keys, ...args);
  }

  /**
   * An ioredis auto-pipeline copies the client's scripts when it is made, and one can stay open over
   * several turns while the one before it is in flight: a script defined after it was made is missing
   * from it ("pipeline[functionName] is not a function"), and ioredis then throws inside a callback,
   * which ends the process. So createRedis defines every script before the client's first command
   * (defineAll), and a script made later is also added to the pipelines already open, as the
   * pipeline's constructor would have (ioredis internals, pinned with the package's exact version;
   * test/integration/redis.test.ts checks it).
   */
  defineOn(redis: Redis): void {
    if (this.definedOn.has(redis)) return;
    redis.defineCommand(this.name, { numberOfKeys: this.numberOfKeys, lua: this.lua });
    this.definedOn.add(redis);
    const client = redis as unknown as ScriptedRedis & Record<string, unknown>;
    const script = client.scriptsSet[this.name];
    for (const pipeline of client._autoPipelines?.values() ?? []) {
      if (script !== undefined) pipeline._shaToScript[script.sha] = script;
      pipeline[this.name] = client[this.name];
      pipeline[`${this.name}Buffer`] = client[`${this.name}Buffer`];
    }
  }

  /** Defines every script made so far on a new client. */
  static defineAll(redis: Redis): void {
    for (const script of SCRIPTS) script.defineOn(redis);
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
