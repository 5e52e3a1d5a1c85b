import { describe, expect, it } from 'vitest';
import { summarizeHeapSnapshotBytes, topGrowth, totalSelfSize, type HeapSummary } from './heap-summary.ts';

const NODE_FIELDS = ['type', 'name', 'id', 'self_size', 'edge_count', 'trace_node_id', 'detachedness'];
const KINDS = ['hidden', 'array', 'string', 'object', 'code', 'closure', 'regexp', 'number', 'native', 'synthetic'];

/** A heap snapshot laid out as V8 writes one: a node per line, then edges, then the strings. */
function makeSnapshot(nodes: readonly [kind: string, name: string, selfSize: number][]): Buffer {
  const strings = ['<dummy>'];
  const index = (text: string) => (strings.includes(text) ? strings.indexOf(text) : strings.push(text) - 1);
  const rows = nodes.map(([kind, name, size], id) => [KINDS.indexOf(kind), index(name), id * 2 + 1, size, 0, 0, 0]);
  const meta = { node_fields: NODE_FIELDS, node_types: [KINDS, 'string', 'number', 'number', 'number', 'number'] };
  const header = JSON.stringify({ snapshot: { meta, node_count: nodes.length, edge_count: 0 } }).slice(0, -1);
  return Buffer.from(
    `${header},\n"nodes":[${rows.map((row) => row.join(',')).join('\n,')}],\n"edges":[],\n` +
      `"trace_function_infos":[],\n"locations":[],\n"strings":[${strings.map((s) => JSON.stringify(s)).join(',\n')}]}`,
  );
}

describe('summarizeHeapSnapshotBytes', () => {
  it('sums self sizes by constructor for objects and by kind for the rest, as DevTools does', () => {
    const summary = summarizeHeapSnapshotBytes(
      makeSnapshot([
        ['synthetic', '(GC roots)', 0],
        ['object', 'Map', 32],
        ['object', 'Map', 48],
        ['object', 'Session', 120],
        ['string', 'a usage event', 40],
        ['closure', 'onData', 56],
        ['native', 'Node / TCPWrap', 16],
        ['code', 'handler', 200],
      ]),
    );
    expect(Object.fromEntries(summary)).toEqual({
      Map: { count: 2, selfSize: 80 },
      Session: { count: 1, selfSize: 120 },
      '(string)': { count: 1, selfSize: 40 },
      '(closure)': { count: 1, selfSize: 56 },
      'Node / TCPWrap': { count: 1, selfSize: 16 },
      '(compiled code)': { count: 1, selfSize: 200 },
    });
    expect(totalSelfSize(summary)).toBe(512);
  });

  it('reads names with escapes, quotes and characters outside ASCII', () => {
    const names = ['Quote"d', 'back\\slash', 'ünïcode ✓', 'line\nbreak'];
    const summary = summarizeHeapSnapshotBytes(makeSnapshot(names.map((name) => ['object', name, 8] as const)));
    expect([...summary.keys()].sort()).toEqual([...names].sort());
  });

  it('refuses a file that is not a whole snapshot', () => {
    expect(() => summarizeHeapSnapshotBytes(Buffer.from('{"nothing":[]}'))).toThrow(/not a V8 heap snapshot/);
    const whole = makeSnapshot([['object', 'Map', 32]]);
    expect(() => summarizeHeapSnapshotBytes(whole.subarray(0, whole.indexOf('"nodes":[') + 12))).toThrow(/nodes/);
  });
});

describe('topGrowth', () => {
  const summary = (entries: Record<string, number>): HeapSummary =>
    new Map(Object.entries(entries).map(([name, selfSize]) => [name, { count: 1, selfSize }]));

  it('lists what grew, largest growth first, including constructors new at the end', () => {
    const growth = topGrowth(
      summary({ Map: 100, Session: 50, Buffer: 10 }),
      summary({ Map: 90, Session: 80, Timer: 60 }),
      5,
    );
    expect(growth.map((g) => [g.name, g.sizeAfter - g.sizeBefore])).toEqual([
      ['Timer', 60],
      ['Session', 30],
    ]);
  });
});
