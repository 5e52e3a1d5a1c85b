import { randomUUID } from 'node:crypto';
import { Decimal } from 'decimal.js';
import { createClickHouse } from '../../services/shared/clickhouse/client.ts';
import { migrate } from '../../services/shared/clickhouse/migrate.ts';
import { loadConfig } from '../../services/shared/config.ts';
import { createLogger } from '../../services/shared/logger.ts';

/**
 * The baseline of consumer_rows_per_s: the same priced usage_events rows inserted with a plain
 * @clickhouse/client JSONEachRow insert into a fresh embedded engine (DATA_DIR) with the same tables
 * and materialized views, in inserts of `batchSize` rows. Prints one JSON line.
 */
const { rows, batchSize } = JSON.parse(process.argv[2]!) as { rows: number; batchSize: number };
const ch = await createClickHouse(loadConfig(process.env));
await migrate(ch, createLogger('error'));
const rate = new Decimal('0.00004');
const at = new Date().toISOString();
const row = (n: number) => {
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
    cost: rate.times(quantity).toFixed(),
    reported_unit_cost: null,
    reported_total_cost: null,
    cost_source: 'computed',
    rate_id: 'tts-resemble-2024-01',
    currency: 'USD',
    needs_reconciliation: false,
    input_tokens: null,
    output_tokens: null,
    occurred_at: at,
    received_at: at,
    kafka_partition: 0,
    kafka_offset: n,
  };
};
const batches = Array.from({ length: Math.ceil(rows / batchSize) }, (_, b) =>
  Array.from({ length: Math.min(batchSize, rows - b * batchSize) }, (_, i) => row(b * batchSize + i)),
);
const started = performance.now();
for (const values of batches) {
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
  `${JSON.stringify({ rows, elapsed_ms: Math.round(elapsed), rows_per_s: Math.round((rows / elapsed) * 1000) })}\n`,
);
