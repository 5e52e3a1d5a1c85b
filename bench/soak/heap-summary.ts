import { readFileSync } from 'node:fs';

/**
 * A V8 heap snapshot summed by constructor, as DevTools' "Summary" view groups it: objects and native
 * objects by their constructor's name, everything else by its kind ("(string)", "(closure)",
 * "(compiled code)", ...), each with its count and the sum of its self sizes.
 *
 * Hand-written because no well-kept library reads a snapshot this lightly: memlab (Meta, maintained)
 * depends on puppeteer and a browser download, which cannot install here; v8-heapsnapshot builds every
 * node and edge as JS objects through a streaming JSON parser last released years ago, several times
 * the snapshot's size in memory for a sum that needs three fields of each node. The format is V8's
 * documented one (`snapshot.meta` names the fields): a header, then flat arrays of integers, then the
 * strings the nodes refer to by index; a snapshot of a few hundred MiB is past V8's longest string,
 * so it is read as bytes, never with one JSON.parse.
 */
export interface ConstructorTotal {
  readonly count: number;
  readonly selfSize: number;
}

export type HeapSummary = Map<string, ConstructorTotal>;

interface SnapshotHeader {
  readonly meta: { readonly node_fields: string[]; readonly node_types: [string[], ...unknown[]] };
  readonly node_count: number;
}

/** DevTools' names for the kinds of node that are not grouped by constructor. */
const KIND_LABELS: Record<string, string> = {
  string: '(string)',
  'concatenated string': '(string)',
  'sliced string': '(string)',
  code: '(compiled code)',
  hidden: '(system)',
};
const NODES = '"nodes":[';
const STRINGS = '"strings":[';
const COMMA = 0x2c;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

export function summarizeHeapSnapshot(file: string): HeapSummary {
  return summarizeHeapSnapshotBytes(readFileSync(file));
}

export function summarizeHeapSnapshotBytes(bytes: Buffer): HeapSummary {
  const nodesAt = bytes.indexOf(NODES);
  if (nodesAt < 0) throw new Error('not a V8 heap snapshot: no "nodes" array');
  const header = bytes.toString('utf8', 0, nodesAt).trimEnd().replace(/,$/, '');
  const { meta, node_count: nodeCount } = (JSON.parse(`${header}}`) as { snapshot: SnapshotHeader }).snapshot;
  const fieldCount = meta.node_fields.length;
  const wanted = [
    meta.node_fields.indexOf('type'),
    meta.node_fields.indexOf('name'),
    meta.node_fields.indexOf('self_size'),
  ];
  // Three columns of the nodes array, in typed arrays: a snapshot holds millions of nodes.
  const columns = [new Float64Array(nodeCount), new Float64Array(nodeCount), new Float64Array(nodeCount)];
  let node = 0;
  let field = 0;
  let value = 0;
  let position = nodesAt + NODES.length;
  for (; position < bytes.length && node < nodeCount; position += 1) {
    const byte = bytes[position]!;
    if (byte >= 0x30 && byte <= 0x39) value = value * 10 + (byte - 0x30);
    else if (byte === COMMA || byte === CLOSE_BRACKET) {
      const column = wanted.indexOf(field);
      if (column >= 0) columns[column]![node] = value;
      value = 0;
      field += 1;
      if (field === fieldCount) [field, node] = [0, node + 1];
    }
  }
  if (node !== nodeCount) throw new Error(`the snapshot holds ${node} of its ${nodeCount} nodes`);

  const strings = readStrings(bytes, bytes.indexOf(STRINGS, position));
  const kinds = meta.node_types[0];
  const [types, names, sizes] = columns as [Float64Array, Float64Array, Float64Array];
  const summary: HeapSummary = new Map();
  for (let i = 0; i < nodeCount; i += 1) {
    const kind = kinds[types[i]!] ?? 'unknown';
    if (kind === 'synthetic') continue;
    const key =
      kind === 'object' || kind === 'native' ? (strings[names[i]!] ?? '(unnamed)') : (KIND_LABELS[kind] ?? `(${kind})`);
    const total = summary.get(key) ?? { count: 0, selfSize: 0 };
    summary.set(key, { count: total.count + 1, selfSize: total.selfSize + sizes[i]! });
  }
  return summary;
}

/** The JSON strings of the `"strings":[...]` array that starts at `at`. */
function readStrings(bytes: Buffer, at: number): string[] {
  if (at < 0) throw new Error('not a V8 heap snapshot: no "strings" array');
  const strings: string[] = [];
  let position = bytes.indexOf(QUOTE, at + STRINGS.length - 1);
  while (position >= 0 && bytes[position] === QUOTE) {
    let end = position + 1;
    while (end < bytes.length && bytes[end] !== QUOTE) end += bytes[end] === BACKSLASH ? 2 : 1;
    strings.push(JSON.parse(bytes.toString('utf8', position, end + 1)) as string);
    position = end + 1;
    while (position < bytes.length && bytes[position] !== QUOTE && bytes[position] !== CLOSE_BRACKET) position += 1;
  }
  return strings;
}

export interface ConstructorGrowth {
  readonly name: string;
  readonly countBefore: number;
  readonly countAfter: number;
  readonly sizeBefore: number;
  readonly sizeAfter: number;
}

/** The constructors whose self sizes grew most from `before` to `after`, largest growth first. */
export function topGrowth(before: HeapSummary, after: HeapSummary, limit: number): ConstructorGrowth[] {
  const names = new Set([...before.keys(), ...after.keys()]);
  return [...names]
    .map((name) => ({
      name,
      countBefore: before.get(name)?.count ?? 0,
      countAfter: after.get(name)?.count ?? 0,
      sizeBefore: before.get(name)?.selfSize ?? 0,
      sizeAfter: after.get(name)?.selfSize ?? 0,
    }))
    .filter((growth) => growth.sizeAfter > growth.sizeBefore)
    .sort((a, b) => b.sizeAfter - b.sizeBefore - (a.sizeAfter - a.sizeBefore))
    .slice(0, limit);
}

export const totalSelfSize = (summary: HeapSummary) =>
  [...summary.values()].reduce((sum, total) => sum + total.selfSize, 0);
