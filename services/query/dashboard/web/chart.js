// @ts-check
import uPlot from 'uplot';

/** @typedef {import('../../../../test/openapi/callmeter-api.ts').components['schemas']['TimelinePoint']} TimelinePoint */
/** @typedef {'service' | 'provider'} GroupBy */

const COLOURS = ['#0a5fd6', '#e0661b', '#0b7a3b', '#8250df', '#b42318', '#1b7c83', '#9a6700', '#57606a'];

// The timeline as stacked bars, one group per bucket. The bar heights are floats for drawing only:
// every amount the page shows is the API's exact decimal string (the tables below the chart).
/**
 * @param {HTMLElement} element
 * @param {TimelinePoint[]} points
 * @param {GroupBy} groupBy
 * @returns {uPlot}
 */
export function drawTimeline(element, points, groupBy) {
  element.replaceChildren();
  const keys = [...new Set(points.flatMap((p) => Object.keys(groupOf(p, groupBy))))].sort();
  const xs = points.map((_, index) => index);
  const running = points.map(() => 0);
  const stacked = keys.map((key) =>
    points.map((point, index) => (running[index] = (running[index] ?? 0) + Number(groupOf(point, groupBy)[key] ?? 0))),
  );
  // uPlot's types leave the bars builder optional (its smaller builds leave it out); the ESM build has it.
  const bars = uPlot.paths.bars;
  if (bars === undefined) throw new Error('this uPlot build draws no bars');
  const series = keys.map((key, index) => ({
    label: key,
    stroke: COLOURS[index % COLOURS.length],
    fill: COLOURS[index % COLOURS.length],
    paths: bars({ size: [0.7, 48] }),
    points: { show: false },
  }));
  const width = Math.max(200, element.clientWidth || 600);
  const plot = new uPlot(
    {
      width,
      height: 260,
      // Half a bucket of room on each side, so a range of one bucket is a bar, not a line at the edge.
      scales: { x: { time: false, range: (_, min, max) => [min - 0.5, max + 0.5] } },
      axes: [
        { values: (_, ticks) => ticks.map((tick) => points[tick]?.date ?? '') },
        { values: (_, ticks) => ticks.map((tick) => `$${tick}`) },
      ],
      series: [{ label: 'bucket', value: (_, index) => points[index]?.date ?? '' }, ...series.reverse()],
      legend: { show: true },
    },
    // uPlot draws later series over earlier ones: the tallest (cumulative) first.
    [xs, ...stacked.reverse()],
    element,
  );
  element.dataset.points = String(points.length);
  return plot;
}

/**
 * A bucket's costs by provider (the API's decimal strings) or by service (summed per service).
 * @param {TimelinePoint} point
 * @param {GroupBy} groupBy
 * @returns {Record<string, string | number>}
 */
function groupOf(point, groupBy) {
  if (groupBy === 'provider') return point.by_provider;
  /** @type {Record<string, number>} */
  const costs = {};
  for (const s of point.by_service) costs[s.service] = (costs[s.service] ?? 0) + Number(s.cost);
  return costs;
}
