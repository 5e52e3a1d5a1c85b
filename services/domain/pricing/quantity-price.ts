import type { Rate } from '../../../schemas/rate-card.ts';
import {
  Exact,
  formatStoredUnits,
  parseScaled,
  storedUnits,
  toStoredDecimal,
  type Scaled,
} from '../../shared/exact-decimal.ts';

/** A quantity rate's numbers for the scaled path: its price, its price_per as a power of ten, its printed forms. */
interface ScaledRate {
  readonly price: Scaled;
  /** price_per is 10^perExponent. */
  readonly perExponent: number;
  readonly priceText: string;
  readonly perText: string;
  readonly unitCost: string;
}

/** The cost of a quantity at a card rate, as stored, and the stored quantity. */
export interface ScaledCost {
  readonly quantity: string;
  readonly cost: string;
  /** The rate's price ÷ price_per, as stored. */
  readonly unitCost: string;
  readonly priceText: string;
  readonly perText: string;
}

// Below 10^60 a product has at most 60 digits, which Exact (60 significant digits) holds without rounding.
const EXACT_LIMIT = 10n ** 60n;
const rates = new WeakMap<Rate, ScaledRate | null>();

/**
 * quantity × price ÷ price_per rounded as stored, with BigInts instead of Exact: the same digits,
 * because the product below 10^60 is exact in both and dividing by a power of ten only moves the
 * point. null where that does not hold (a price_per that is no power of ten, a product of more than
 * 60 digits, a quantity that is no plain decimal): the caller prices with Exact.
 */
export function scaledCost(rate: Rate, quantityText: string): ScaledCost | null {
  const numbers = scaledRateOf(rate);
  if (numbers === null) return null;
  const quantity = parseScaled(quantityText);
  if (quantity === null) return null;
  const product = quantity.units * numbers.price.units;
  if (product >= EXACT_LIMIT) return null;
  const scale = quantity.scale + numbers.price.scale + numbers.perExponent;
  const cost = scale >= 0 ? { units: product, scale } : { units: product * 10n ** BigInt(-scale), scale: 0 };
  return {
    quantity: formatStoredUnits(storedUnits(quantity)),
    cost: formatStoredUnits(storedUnits(cost)),
    unitCost: numbers.unitCost,
    priceText: numbers.priceText,
    perText: numbers.perText,
  };
}

/** Parsed once per rate (a card's rates are frozen); null when its price_per is no power of ten or a number is signed. */
function scaledRateOf(rate: Rate): ScaledRate | null {
  const known = rates.get(rate);
  if (known !== undefined) return known;
  const price = parseScaled(rate.price);
  const per = parseScaled(rate.price_per);
  let parsed: ScaledRate | null = null;
  if (price !== null && per !== null && /^10*$/.test(per.units.toString())) {
    const exactPrice = new Exact(rate.price);
    const exactPer = new Exact(rate.price_per);
    parsed = {
      price,
      perExponent: per.units.toString().length - 1 - per.scale,
      priceText: exactPrice.toFixed(),
      perText: exactPer.toFixed(),
      unitCost: toStoredDecimal(exactPrice.dividedBy(exactPer)),
    };
  }
  rates.set(rate, parsed);
  return parsed;
}
