import type { SentEvent } from './load-driver.ts';

/** The table a load test prints: per phase, events sent, acknowledged, stored, lost and duplicated. */
export function phaseReport(
  events: readonly SentEvent[],
  stored: ReadonlyMap<string, number>,
  heading = 'phase',
): string {
  const phases = [...new Set(events.map((event) => event.phase))];
  const lines = [
    `| ${heading} | events sent | acknowledged | refused (invalid) | stored | lost | duplicated |`,
    '|---|---|---|---|---|---|---|',
  ];
  for (const phase of [...phases, 'all']) {
    const own = events.filter((event) => phase === 'all' || event.phase === phase);
    const count = (predicate: (event: SentEvent) => boolean) => own.filter(predicate).length;
    lines.push(
      `| ${phase} | ${own.length} | ${count((e) => e.acknowledged)} | ${count((e) => e.refused)} | ${count((e) => (stored.get(e.id) ?? 0) > 0)} | ${count((e) => e.acknowledged && !stored.has(e.id))} | ${count((e) => (stored.get(e.id) ?? 0) > 1)} |`,
    );
  }
  return lines.join('\n');
}
