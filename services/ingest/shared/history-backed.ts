import { AppError } from '../../shared/errors.ts';

interface LiveStore<T, M, O> {
  create(item: T): Promise<void>;
  get(id: string): Promise<T | null>;
  update(id: string, mutate: M): Promise<O>;
}

interface History<T> {
  byId(id: string): Promise<T | null>;
}

/**
 * Live state first, history second, for sessions and agents alike: when the live store no longer
 * holds one (it ended and expired, Redis was flushed, or an embedded process restarted), its latest
 * stored version is read from ClickHouse and put back into the live store before the call goes on.
 */
export abstract class HistoryBacked<T extends { readonly id: string }, M, O extends { readonly kind: string }> {
  constructor(
    protected readonly live: LiveStore<T, M, O>,
    private readonly stored: History<T>,
  ) {}

  create(item: T): Promise<void> {
    return this.live.create(item);
  }

  async get(id: string): Promise<T | null> {
    return (await this.live.get(id)) ?? this.restore(await this.stored.byId(id));
  }

  async update(id: string, mutate: M): Promise<O> {
    const outcome = await this.live.update(id, mutate);
    if (outcome.kind !== 'not_found') return outcome;
    return (await this.restore(await this.stored.byId(id))) === null ? outcome : this.live.update(id, mutate);
  }

  protected async restore(item: T | null): Promise<T | null> {
    if (item === null) return null;
    try {
      await this.live.create(item);
      return item;
    } catch (error) {
      // Another request restored it first: the live copy wins, it may already be newer.
      if (error instanceof AppError && error.code === 'CONFLICT') return this.live.get(item.id);
      throw error;
    }
  }
}
