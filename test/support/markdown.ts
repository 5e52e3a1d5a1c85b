import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

// Written by hand: no Markdown parser is among the dependencies (node_modules is shared and the lockfile is
// not changed for a test), and the pages use only what is read here: ``` fences, ATX headings and inline
// [text](target) links. Anchors follow GitHub's rule (github-slugger): lower case, punctuation dropped,
// spaces to hyphens, a repeat suffixed -1, -2.

/** The info string that marks a fenced block the docs test runs. */
export const TESTED_INFO = 'sh tested';

export interface FencedBlock {
  readonly info: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  readonly code: string;
}

interface Line {
  readonly text: string;
  readonly number: number;
}

/** The lines outside fenced blocks, and the fenced blocks. */
function split(markdown: string): { prose: Line[]; blocks: FencedBlock[] } {
  const prose: Line[] = [];
  const blocks: FencedBlock[] = [];
  let open: { fence: string; info: string; line: number; code: string[] } | null = null;
  markdown.split('\n').forEach((text, index) => {
    const fence = /^(`{3,}|~{3,})\s*(.*)$/.exec(text);
    if (open === null) {
      if (fence) open = { fence: fence[1]!, info: fence[2]!.trim(), line: index + 1, code: [] };
      else prose.push({ text, number: index + 1 });
    } else if (fence && fence[1]!.startsWith(open.fence) && fence[2]!.trim() === '') {
      blocks.push({ info: open.info, line: open.line, code: open.code.join('\n') });
      open = null;
    } else open.code.push(text);
  });
  return { prose, blocks };
}

export function fencedBlocks(markdown: string): FencedBlock[] {
  return split(markdown).blocks;
}

export function testedBlocks(markdown: string): FencedBlock[] {
  return fencedBlocks(markdown).filter((block) => block.info === TESTED_INFO);
}

/** GitHub's anchor of a heading's text. */
export function slug(heading: string): string {
  const text = heading
    .replace(/`([^`]*)`/g, '$1')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const { text } of split(markdown).prose) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(text);
    if (!heading) continue;
    const base = slug(heading[1]!);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    result.add(count === 0 ? base : `${base}-${count}`);
  }
  return result;
}

export interface Link {
  readonly target: string;
  readonly line: number;
}

/** Every inline link and image outside code (fenced blocks and `code spans`). */
export function links(markdown: string): Link[] {
  const found: Link[] = [];
  for (const { text, number } of split(markdown).prose) {
    const outsideCode = text.replace(/`[^`]*`/g, '');
    for (const match of outsideCode.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g))
      found.push({ target: match[1]!, line: number });
  }
  return found;
}

function isExternal(target: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(target);
}

/**
 * The relative links of a page (a path from `root`) that do not resolve: a file or folder that is not
 * there, or an #anchor that is not a heading of the page it names.
 */
export function brokenLinks(root: string, page: string): string[] {
  const markdown = readFileSync(path.join(root, page), 'utf8');
  const broken: string[] = [];
  for (const { target, line } of links(markdown)) {
    if (isExternal(target)) continue;
    const [file = '', anchor] = target.split('#', 2);
    const resolved = file === '' ? page : path.normalize(path.join(path.dirname(page), decodeURI(file)));
    const where = `${page}:${line} → ${target}`;
    const absolute = path.join(root, resolved);
    if (!existsSync(absolute)) {
      broken.push(`${where}: no ${resolved}`);
      continue;
    }
    if (anchor === undefined || statSync(absolute).isDirectory() || !resolved.endsWith('.md')) continue;
    if (!anchors(readFileSync(absolute, 'utf8')).has(anchor)) broken.push(`${where}: no heading #${anchor}`);
  }
  return broken;
}

/** README.md and every page of docs/, as paths from the repository root. */
export function documentationPages(root: string): string[] {
  const docs = readdirSync(path.join(root, 'docs'))
    .filter((file) => file.endsWith('.md'))
    .sort()
    .map((file) => `docs/${file}`);
  return ['README.md', ...docs];
}

/**
 * One bash script that runs a page's tested blocks in order, in one shell (a variable one block sets is
 * there in the next), stopping at the first command that fails and naming the block's line.
 */
export function scriptOf(page: string, markdown: string): string {
  const lines = ['set -euo pipefail', `trap 'echo "docs test: the block at ${page}:$__block failed" >&2' ERR`];
  for (const block of testedBlocks(markdown)) lines.push(`__block=${block.line}`, block.code);
  return `${lines.join('\n')}\n`;
}
