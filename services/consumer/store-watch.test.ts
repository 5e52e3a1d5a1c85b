import { describe, expect, it } from 'vitest';
import { StoreWatch } from './store-watch.ts';

describe('StoreWatch', () => {
  it('says a partition is stalled once its batch has failed to store for longer than the limit, and not after it is stored', () => {
    let now = 1_000_000;
    const watch = new StoreWatch(60_000, () => now);
    watch.fetched('usage', 3, now - 5_000, 120n);
    watch.failed('usage', 3);
    now += 60_000;
    expect(watch.stalled()).toBeNull();
    watch.failed('usage', 3);
    now += 1;
    expect(watch.stalled()).toBe('stalled: a batch of usage/3 has failed to store for 60 s');
    watch.settled('usage', 3);
    expect(watch.stalled()).toBeNull();
  });

  it('serves lag, failures and the age of the oldest unstored record as Prometheus metrics', async () => {
    let now = 1_000_000;
    const watch = new StoreWatch(60_000, () => now);
    watch.fetched('usage', 0, now - 2_000, 40n);
    watch.fetched('usage', 1, now - 9_000, 7n);
    watch.failed('usage', 1);
    now += 1_000;
    const text = await watch.registry.metrics();
    expect(text).toContain('consumer_lag_records{topic="usage",partition="0"} 40');
    expect(text).toContain('consumer_store_failures_total{topic="usage",partition="1"} 1');
    expect(text).toContain('consumer_oldest_unstored_record_age_seconds 10');
    watch.settled('usage', 0);
    watch.settled('usage', 1);
    expect(await watch.registry.metrics()).toContain('consumer_oldest_unstored_record_age_seconds 0');
  });
});
