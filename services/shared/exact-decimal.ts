import { Decimal } from 'decimal.js';

/**
 * A private clone so no other module's Decimal settings can change a price: 60 significant digits
 * keep every product and quotient exact well past the 18 decimals stored, and money rounds half to
 * even so that rounding errors do not drift one way over many events.
 */
export const Exact = Decimal.clone({ precision: 60, rounding: Decimal.ROUND_HALF_EVEN });
export type Exact = Decimal;

/** The store keeps money and quantities as Decimal(38, 18). */
export const MONEY_SCALE = 18;

const DECIMAL_TEXT = /^-?\d+(\.\d+)?$/;

/** A plain decimal string (`12`, `0.5`, `-3.25`) as an exact value; anything else is null. */
export function parseExact(text: string): Exact | null {
  return DECIMAL_TEXT.test(text) ? new Exact(text) : null;
}

/**
 * The stored form of an amount or quantity: rounded to 18 decimals half to even, then printed in plain
 * notation with no trailing zeros (`0.01155`, `0.0000003`, `0`), never in exponent form.
 */
export function toStoredDecimal(value: Exact): string {
  const rounded = value.toDecimalPlaces(MONEY_SCALE, Exact.ROUND_HALF_EVEN);
  // A tiny negative rounds to -0, which would print as "-0".
  return rounded.isZero() ? '0' : rounded.toFixed();
}
