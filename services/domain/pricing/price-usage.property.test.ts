import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { USAGE_LIMITS } from '../../../schemas/records/usage.ts';
import { Exact } from '../../shared/exact-decimal.ts';
import { priceUsage, priceUsageExactly } from './price-usage.ts';
import { makeCard, makeRate, makeUsage } from './pricing.fixtures.ts';

/** A plain decimal string with up to 18 decimals, from 0 to about a million units. */
const decimalText = fc
  .integer({ min: 0, max: 18 })
  .chain((scale) =>
    fc
      .bigInt({ min: 0n, max: 10n ** BigInt(scale + 6) })
      .map((digits) => new Exact(digits.toString()).dividedBy(new Exact(10).pow(scale)).toFixed()),
  );
// Up to 1,000 per price_per units: the most per unit a card may ask (USAGE_LIMITS.MAX_RATE_PER_UNIT).
const priceText = fc
  .tuple(fc.integer({ min: 0, max: 1_000 }), fc.integer({ min: 0, max: 9 }))
  .map(([digits, scale]) => new Exact(digits).dividedBy(new Exact(10).pow(scale)).toFixed());
const pricePer = fc.constantFrom('1', '3', '7', '1000', '1000000');
const HALF_ULP = new Exact('0.5e-18');

describe('priceUsage, for any linear rate', () => {
  it('prices the sum of many quantities as the sum of their costs, within one rounding per event', () => {
    fc.assert(
      fc.property(
        priceText,
        pricePer,
        fc.array(decimalText, { minLength: 1, maxLength: 40 }),
        (price, per, quantities) => {
          const card = makeCard([makeRate({ price, price_per: per })]);
          const costs = quantities.map((quantity) => priceUsage(card, makeUsage({ quantity })).cost);
          const summedCost = Exact.sum(...costs);
          const costOfSum = new Exact(
            priceUsage(card, makeUsage({ quantity: Exact.sum(...quantities).toFixed() })).cost,
          );
          // Each stored cost is off by at most half a unit in the 18th place, and so is the cost of the sum.
          expect(
            summedCost
              .minus(costOfSum)
              .abs()
              .lessThanOrEqualTo(HALF_ULP.times(quantities.length + 1)),
          ).toBe(true);
        },
      ),
    );
  });

  it('never costs one event more than MAX_EVENT_COST, for any rate a card may hold and any quantity ingest takes', () => {
    // Quantities up to 10^12 with 18 decimals, the bounds included; a rate up to 1,000 per unit.
    const quantity = fc.oneof(
      fc.bigInt({ min: 0n, max: 10n ** 30n }).map((raw) => new Exact(raw.toString()).dividedBy('1e18').toFixed()),
      fc.constant(String(USAGE_LIMITS.MAX_QUANTITY)),
    );
    const rate = fc.oneof(
      fc
        .tuple(fc.integer({ min: 0, max: 1_000_000 }), fc.constantFrom('1', '1000', '1000000'))
        .map(([digits, per]) => ({ price: new Exact(digits).times(per).dividedBy(1000).toFixed(), per })),
      fc.constant({ price: '1000', per: '1' }),
    );
    fc.assert(
      fc.property(rate, quantity, ({ price, per }, sent) => {
        const card = makeCard([
          makeRate({ price, price_per: per }),
          makeRate({
            id: 'split',
            event_type: 'llm_tokens',
            unit: 'token',
            pricing: 'input_tokens',
            price,
            price_per: per,
          }),
        ]);
        for (const usage of [
          makeUsage({ quantity: sent }),
          makeUsage({ event_type: 'llm_tokens', quantity: sent, input_tokens: sent }),
        ]) {
          expect(new Exact(priceUsage(card, usage).cost).lessThanOrEqualTo(USAGE_LIMITS.MAX_EVENT_COST)).toBe(true);
        }
      }),
    );
    expect(
      priceUsage(makeCard([makeRate({ price: '1000', price_per: '1' })]), makeUsage({ quantity: '1000000000000' }))
        .cost,
    ).toBe('1000000000000000');
  });

  it('never prints a number in exponent form', () => {
    fc.assert(
      fc.property(
        priceText,
        pricePer,
        decimalText,
        fc.option(decimalText, { nil: undefined }),
        (price, per, quantity, reported) => {
          const card = makeCard([
            makeRate({ price, price_per: per }),
            makeRate({
              id: 'split',
              event_type: 'llm_tokens',
              unit: 'token',
              pricing: 'input_tokens',
              price,
              price_per: per,
            }),
          ]);
          const results = [
            priceUsage(card, makeUsage({ quantity, reported_total_cost: reported })),
            priceUsage(card, makeUsage({ provider: 'unknown', quantity, reported_unit_cost: reported })),
            priceUsage(card, makeUsage({ event_type: 'llm_tokens', quantity, input_tokens: quantity })),
          ];
          const strings = results.flatMap((result) => [result.quantity, result.cost, result.unit_cost]);
          // Plain digits, no trailing zeros: rules out 3e-7 and 3E-7 alike.
          for (const text of strings) expect(text).toMatch(/^\d+(\.\d*[1-9])?$/);
        },
      ),
    );
  });
});

/** Plain digits with up to 30 decimals and up to 40 whole digits: past 60 digits in a product, and past 18 decimals. */
const anyDecimalText = fc
  .tuple(fc.bigInt({ min: 0n, max: 10n ** 40n }), fc.integer({ min: 0, max: 30 }))
  .map(([digits, scale]) => new Exact(digits.toString()).dividedBy(new Exact(10).pow(scale)).toFixed(scale));
const anyPricePer = fc.oneof(
  fc.constantFrom('1', '10', '1000', '1000000', '0.1', '1.000', '100.0', '3', '7', '1.5', '0', '0.000'),
  anyDecimalText,
);

describe('priceUsage on the scaled path', () => {
  it('gives what Exact gives, string for string and key for key', () => {
    fc.assert(
      fc.property(
        fc.oneof(priceText, anyDecimalText),
        anyPricePer,
        fc.oneof(decimalText, anyDecimalText),
        fc.option(fc.oneof(decimalText, anyDecimalText), { nil: null }),
        fc.boolean(),
        (price, per, quantity, reported, tenant) => {
          // Past what a card may hold (a price_per of 0, above 1,000 per unit): the arithmetic, not the card's checks.
          const rate = makeRate({ price, price_per: per, ...(tenant ? { user_id: 'user-1', currency: 'EUR' } : {}) });
          const card = { ...makeCard([]), rates: [rate] };
          const usage = makeUsage({ quantity, reported_total_cost: reported });
          expect(JSON.stringify(priceUsage(card, usage))).toBe(JSON.stringify(priceUsageExactly(card, usage)));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('leaves every other event to Exact: token counts, no quantity rate, the catalog, the sender', () => {
    const card = makeCard([
      makeRate({ price: '0.0077', price_per: '1' }),
      makeRate({
        id: 'in',
        event_type: 'llm_tokens',
        unit: 'token',
        pricing: 'input_tokens',
        price: '0.3',
        price_per: '1000000',
      }),
      makeRate({ id: 'blend', event_type: 'llm_tokens', unit: 'token', price: '0.86', price_per: '1000000' }),
    ]);
    const usages = [
      makeUsage({ event_type: 'llm_tokens', quantity: '1200', input_tokens: '1200' }),
      makeUsage({ event_type: 'llm_tokens', quantity: '1200', input_tokens: '900', output_tokens: '300' }),
      makeUsage({ provider: 'nobody', quantity: '2', reported_unit_cost: '0.5' }),
      makeUsage({ provider: 'nobody', quantity: '2' }),
      makeUsage({ quantity: '2.5', occurred_at: new Date('2020-01-01T00:00:00Z') }),
    ];
    for (const usage of usages) expect(priceUsage(card, usage)).toStrictEqual(priceUsageExactly(card, usage));
  });
});
