import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Exact } from '../../shared/exact-decimal.ts';
import { priceUsage } from './price-usage.ts';
import { makeCard, makeRate, makeUsage } from './pricing.fixtures.ts';

/** A plain decimal string with up to 18 decimals, from 0 to about a million units. */
const decimalText = fc
  .integer({ min: 0, max: 18 })
  .chain((scale) => fc.bigInt({ min: 0n, max: 10n ** BigInt(scale + 6) }).map((digits) => new Exact(digits.toString()).dividedBy(new Exact(10).pow(scale)).toFixed()));
const priceText = fc.tuple(fc.integer({ min: 0, max: 10_000_000 }), fc.integer({ min: 0, max: 9 })).map(([digits, scale]) => new Exact(digits).dividedBy(new Exact(10).pow(scale)).toFixed());
const pricePer = fc.constantFrom('1', '3', '7', '1000', '1000000');
const HALF_ULP = new Exact('0.5e-18');

describe('priceUsage, for any linear rate', () => {
  it('prices the sum of many quantities as the sum of their costs, within one rounding per event', () => {
    fc.assert(
      fc.property(priceText, pricePer, fc.array(decimalText, { minLength: 1, maxLength: 40 }), (price, per, quantities) => {
        const card = makeCard([makeRate({ price, price_per: per })]);
        const costs = quantities.map((quantity) => priceUsage(card, makeUsage({ quantity })).cost);
        const summedCost = Exact.sum(...costs);
        const costOfSum = new Exact(priceUsage(card, makeUsage({ quantity: Exact.sum(...quantities).toFixed() })).cost);
        // Each stored cost is off by at most half a unit in the 18th place, and so is the cost of the sum.
        expect(summedCost.minus(costOfSum).abs().lessThanOrEqualTo(HALF_ULP.times(quantities.length + 1))).toBe(true);
      }),
    );
  });

  it('never prints a number in exponent form', () => {
    fc.assert(
      fc.property(priceText, pricePer, decimalText, fc.option(decimalText, { nil: undefined }), (price, per, quantity, reported) => {
        const card = makeCard([makeRate({ price, price_per: per }), makeRate({ id: 'split', event_type: 'llm_tokens', unit: 'token', pricing: 'input_tokens', price, price_per: per })]);
        const results = [
          priceUsage(card, makeUsage({ quantity, reported_total_cost: reported })),
          priceUsage(card, makeUsage({ provider: 'unknown', quantity, reported_unit_cost: reported })),
          priceUsage(card, makeUsage({ event_type: 'llm_tokens', quantity, input_tokens: quantity })),
        ];
        const strings = results.flatMap((result) => [result.quantity, result.cost, result.unit_cost]);
        // Plain digits, no trailing zeros: rules out 3e-7 and 3E-7 alike.
        for (const text of strings) expect(text).toMatch(/^\d+(\.\d*[1-9])?$/);
      }),
    );
  });
});
