import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { markEngineOpen } from './open-marker.ts';

describe('the embedded engine open marker', () => {
  it('tells a start after a clean close from a start after a process that never closed', () => {
    const dir = path.join(mkdtempSync(path.join(os.tmpdir(), 'marker-')), 'data');
    const first = markEngineOpen(dir);
    expect(first.uncleanBefore).toBe(false);
    // Killed: closed() never ran.
    const afterKill = markEngineOpen(dir);
    expect(afterKill.uncleanBefore).toBe(true);
    afterKill.closed();
    expect(markEngineOpen(dir).uncleanBefore).toBe(false);
  });
});
