import { describe, expect, it } from 'vitest';
import { engineFigures } from './report.ts';

describe('the soak report', () => {
  it("reads the embedded engine's gauges from a /metrics text, and nothing from a process without them", () => {
    const text = [
      '# HELP callmeter_clickhouse_engine_memory_bytes The embedded engine’s memory by part',
      '# TYPE callmeter_clickhouse_engine_memory_bytes gauge',
      'callmeter_clickhouse_engine_memory_bytes{part="tracked"} 47136185',
      'callmeter_clickhouse_engine_memory_bytes{part="mark_cache"} 0',
      'callmeter_clickhouse_engine_memory_bytes{part="primary_keys"} 3128',
      'callmeter_clickhouse_engine_parts{state="active"} 5',
      'callmeter_clickhouse_engine_parts{state="outdated"} 2',
      'callmeter_clickhouse_reads_waiting 0',
      'process_resident_memory_bytes 400000000',
    ].join('\n');
    expect(engineFigures(text)).toEqual({
      engine_tracked_bytes: 47136185,
      engine_mark_cache_bytes: 0,
      engine_primary_keys_bytes: 3128,
      engine_parts_active: 5,
      engine_parts_outdated: 2,
    });
    expect(engineFigures('process_resident_memory_bytes 400000000\n')).toEqual({});
  });
});
