import { randomUUID } from 'node:crypto';
import { Decimal } from 'decimal.js';
import { createClickHouse } from '../../services/shared/clickhouse/client.ts';
import { insertRows } from '../../services/shared/clickhouse/insert-rows.ts';
import { usageEventRow, type UsageEventRow } from '../../services/shared/clickhouse/tables/usage-events.ts';
import { migrate } from '../../services/shared/clickhouse/migrate.ts';
import { loadConfig } from '../../services/shared/config.ts';
import { createLogger } from '../../services/shared/logger.ts';
import { loadCatalogs } from '../../services/domain/pricing/index.ts';
import { DEFAULT_RATE_CARD_URL, loadRateCard } from '../../services/domain/pricing/index.ts';
import { priceUsage } from '../../services/domain/pricing/index.ts';
import type { UsageRecord } from '../../services/domain/records/index.ts';
import { usageEnvelope } from './usage-records.ts';

/**
 * The baseline of consumer_rows_per_s: usage_events rows inserted straight into a fresh embedded engine
 * (DATA_DIR) with the same tables and materialized views, in inserts of `batchSize` rows, timed alone.
 * `rows: "consumer"` (the baseline): the rows the consumer stores for the bench's load, built before
 * the clock starts by the consumer's own pricing and row builder (50 sessions of one tenant and agent,
 * text-to-speech events of 1 to 997 characters, each with its priced parts), and inserted as the
 * consumer inserts (`insertRows`: JSONCompactEachRow, a deduplication token each), so that the ratio
 * is the consumer's own work against a bare insert of what it writes. `rows: "synthetic"`: the rows of
 * earlier runs (one session, no priced parts, JSONEachRow), kept beside it to compare with their figures. Prints one JSON line.
 */
const { rows, batchSize, shape } = JSON.parse(process.argv[2]!) as {
  rows: number;
  batchSize: number;
  shape: 'consumer' | 'synthetic';
};
const ch = await createClickHouse(loadConfig(process.env));
await migrate(ch, createLogger('error'));
const build = shape === 'consumer' ? await consumerRows() : syntheticRow;
const batches = Array.from({ length: Math.ceil(rows / batchSize) }, (_, b) =>
  Array.from({ length: Math.min(batchSize, rows - b * batchSize) }, (_, i) => build(b * batchSize + i)),
);
const started = performance.now();
for (const [b, values] of batches.entries()) {
  if (shape === 'consumer') await insertRows(ch, 'usageEvents', values as UsageEventRow[], `raw-insert:${b}`);
  else
    await ch.client.insert({
      table: `${ch.database}.usage_events`,
      values,
      format: 'JSONEachRow',
      clickhouse_settings: { date_time_input_format: 'best_effort' },
    });
}
const elapsed = performance.now() - started;
await ch.client.close();
process.stdout.write(
  `${JSON.stringify({ rows, shape, elapsed_ms: Math.round(elapsed), rows_per_s: Math.round((rows / elapsed) * 1000) })}\n`,
);

/** Rows as the consumer makes them from the bench's events: the rate card and catalogs, its row builder. */
async function consumerRows(): Promise<(n: number) => UsageEventRow> {
  const card = await loadRateCard(DEFAULT_RATE_CARD_URL);
  const catalogs = loadCatalogs();
  const sessions = Array.from({ length: 50 }, () => ({ id: randomUUID(), user_id: 'bench-user' }));
  const at = new Date();
  return (n) => {
    // The record ingest publishes for the load's event n (bench/load/usage-records.ts), as the consumer decodes it.
    const record = usageEnvelope(sessions[n % sessions.length]!, n, at).payload as UsageRecord;
    const priced = priceUsage(card, { ...record, occurred_at: at }, catalogs);
    return usageEventRow(record, priced, { partition: n % 12, offset: String(n) });
  };
}

function syntheticRow(n: number) {
  const quantity = 1 + (n % 997);
  return {
    id: randomUUID(),
    user_id: 'bench-raw',
    agent_id: 'agent-bench',
    session_id: '00000000-0000-4000-8000-0000000000aa',
    provider: 'resemble',
    service: 'tts',
    event_type: 'tts_characters',
    model: '',
    quantity: String(quantity),
    unit: 'character',
    unit_cost: '0.00004',
    cost: new Decimal('0.00004').times(quantity).toFixed(),
    reported_unit_cost: null,
    reported_total_cost: null,
    cost_source: 'computed',
    rate_id: 'tts-resemble-2024-01',
    currency: 'USD',
    needs_reconciliation: false,
    input_tokens: null,
    output_tokens: null,
    occurred_at: new Date().toISOString(),
    received_at: new Date().toISOString(),
    kafka_partition: 0,
    kafka_offset: n,
  };
}
