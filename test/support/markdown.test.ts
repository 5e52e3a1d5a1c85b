import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { anchors, brokenLinks, links, scriptOf, slug, testedBlocks } from './markdown.ts';

const PAGE = [
  '# Title',
  '',
  '```sh',
  'echo not run',
  '```',
  '',
  '## The embedded mode (`npm start`)',
  '',
  '```sh tested',
  'X=1',
  '```',
  '',
  '## Notes',
  '## Notes',
  '',
  'See [a](other.md#the-plans-basis), `[not](a-link.md)` and ![img](pic.png).',
  '',
  '````md',
  '```sh tested',
  '[inside](code.md)',
  '```',
  '````',
  '',
  '```sh tested',
  'test "$X" = 1',
  '```',
].join('\n');

describe('the docs test reads Markdown', () => {
  it('takes only the blocks marked sh tested, with the line of their fence, and none inside another fence', () => {
    expect(testedBlocks(PAGE)).toEqual([
      { info: 'sh tested', line: 9, code: 'X=1' },
      { info: 'sh tested', line: 24, code: 'test "$X" = 1' },
    ]);
  });

  it("makes GitHub's anchors: lower case, code and punctuation dropped, repeats numbered", () => {
    expect(slug('The embedded mode (`npm start`)')).toBe('the-embedded-mode-npm-start');
    expect(slug("The capacity plan's basis")).toBe('the-capacity-plans-basis');
    expect(slug('AUTH_MODE')).toBe('auth_mode');
    expect([...anchors(PAGE)]).toEqual(['title', 'the-embedded-mode-npm-start', 'notes', 'notes-1']);
  });

  it('finds links and images outside code only', () => {
    expect(links(PAGE).map((link) => [link.target, link.line])).toEqual([
      ['other.md#the-plans-basis', 16],
      ['pic.png', 16],
    ]);
  });

  it('reports a missing file and a missing anchor, and leaves external links alone', () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'callmeter-markdown-'));
    mkdirSync(path.join(root, 'docs'));
    writeFileSync(path.join(root, 'docs/other.md'), '# Other\n\n## The plan’s basis\n');
    writeFileSync(
      path.join(root, 'README.md'),
      [
        '[ok](docs/other.md#the-plans-basis) [ok](docs/other.md) [ok](#top) [web](https://example.com/x#y)',
        '[gone](docs/gone.md) [bad anchor](docs/other.md#nowhere) [self](#nowhere)',
        '',
        '# Top',
      ].join('\n'),
    );
    expect(brokenLinks(root, 'README.md')).toEqual([
      'README.md:2 → docs/gone.md: no docs/gone.md',
      'README.md:2 → docs/other.md#nowhere: no heading #nowhere',
      'README.md:2 → #nowhere: no heading #nowhere',
    ]);
  });

  it('runs a page’s blocks in one shell and names the block whose command failed', () => {
    const passing = spawnSync('bash', ['-c', scriptOf('page.md', PAGE)], { encoding: 'utf8' });
    expect(passing.status).toBe(0);
    const failing = spawnSync(
      'bash',
      ['-c', scriptOf('page.md', `${PAGE}\n\n\`\`\`sh tested\nfalse\necho after\n\`\`\`\n`)],
      {
        encoding: 'utf8',
      },
    );
    expect(failing.status).not.toBe(0);
    expect(failing.stdout).not.toContain('after');
    expect(failing.stderr).toContain('docs test: the block at page.md:28 failed');
  });
});
