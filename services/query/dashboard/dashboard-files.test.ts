import { readFile } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { DASHBOARD_FILES } from './dashboard-routes.ts';

describe('the dashboard files', () => {
  it('all exist, and the JavaScript the page loads is under 200 KB gzipped', async () => {
    let gzipped = 0;
    for (const [name, asset] of Object.entries(DASHBOARD_FILES)) {
      const bytes = await readFile(asset.file());
      expect(bytes.length, name).toBeGreaterThan(0);
      if (asset.type.startsWith('text/javascript')) gzipped += gzipSync(bytes, { level: 9 }).length;
    }
    process.stdout.write(`dashboard JavaScript: ${gzipped} bytes gzipped\n`);
    expect(gzipped).toBeGreaterThan(10_000);
    expect(gzipped).toBeLessThan(200 * 1024);
  });
});
