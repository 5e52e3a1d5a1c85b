import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parsePythonJson } from './python-json.ts';
import { PyFloat, type PyValue } from './py-value.ts';

/** The JS value JSON.parse would give for the same document. */
function toJs(value: PyValue): unknown {
  if (typeof value === 'bigint') return Number(value);
  if (value instanceof PyFloat) return value.value;
  if (Array.isArray(value)) return value.map(toJs);
  if (value instanceof Map) return Object.fromEntries([...value].map(([k, v]) => [k, toJs(v)]));
  return value;
}

describe('parsePythonJson agrees with JSON.parse where Python and JS agree', () => {
  it('gives JSON.parse values for any valid JSON document (no NaN, no duplicate keys)', () => {
    fc.assert(
      fc.property(fc.json({ depthSize: 'medium' }), (text) => {
        const parsed = parsePythonJson(text);
        expect(parsed.ok).toBe(true);
        if (parsed.ok) expect(toJs(parsed.value)).toStrictEqual(JSON.parse(text));
      }),
      { numRuns: 2000 },
    );
  });

  it('round-trips any Unicode string, escaped or raw', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        expect(parsePythonJson(JSON.stringify(s))).toEqual({ ok: true, value: s });
      }),
      { numRuns: 2000 },
    );
  });

  it('fails where JSON.parse fails, except for the literals only Python accepts', () => {
    const pythonOnly = /NaN|Infinity/;
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...'{}[],:"\\ntrufalsNI0123456789.eE+- \t\u0001é') }), (text) => {
        let jsOk = true;
        try {
          JSON.parse(text);
        } catch {
          jsOk = false;
        }
        const parsed = parsePythonJson(text);
        if (!pythonOnly.test(text)) expect(parsed.ok).toBe(jsOk);
        if (!parsed.ok && parsed.kind === 'decode') expect(parsed.pos).toBeLessThanOrEqual([...text].length);
      }),
      { numRuns: 5000 },
    );
  });
});
