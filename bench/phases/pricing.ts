import { runJson, say } from '../support/processes.ts';
import { ratioOf, type Metric } from '../support/results.ts';

/**
 * Pricing, one round: bench/load/pricing.ts prices one event by the five-entry card and by the whole
 * catalog in alternating rounds of its own and reports each one's median round.
 */
export async function pricingRound(options: { rounds: number; perRound: number }): Promise<Metric[]> {
  say('pricing: one event by the five-entry card, and with the whole catalog loaded');
  const pricing = await runJson<{
    card_ns: number;
    card_with_catalog_ns: number;
    fleet_catalog_ns: number;
    fleet_unpriced: number;
  }>('bench/load/pricing.ts', [JSON.stringify(options)]);
  if (pricing.fleet_unpriced !== 0)
    throw new Error(`the pricing benchmark's fleet mix has ${pricing.fleet_unpriced} unpriced event(s)`);
  const perEvent = (ns: number) => Math.round(ns) / 1000;
  return [
    { name: 'pricing_card_us_per_event', value: perEvent(pricing.card_ns), unit: 'µs' },
    {
      name: 'pricing_card_with_catalog_us_per_event',
      value: perEvent(pricing.card_with_catalog_ns),
      unit: 'µs',
      baseline: perEvent(pricing.card_ns),
      ratio: ratioOf(pricing.card_with_catalog_ns, pricing.card_ns),
      target: '<= 1.2',
    },
    {
      name: 'pricing_fleet_catalog_us_per_event',
      value: perEvent(pricing.fleet_catalog_ns),
      unit: 'µs',
      baseline: perEvent(pricing.card_ns),
      ratio: ratioOf(pricing.fleet_catalog_ns, pricing.card_ns),
      target: '<= 1.2',
    },
  ];
}
