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

/**
 * A non-negative exact decimal as a BigInt count of units of 10^-scale: the fast path of the common
 * multiply-and-round, which gives what the Exact path gives to the last digit (`price-usage` falls
 * back to Exact wherever it could not prove that: more than 60 digits, a unit that is no power of ten).
 */
export interface Scaled {
  readonly units: bigint;
  readonly scale: number;
}

const PLAIN_DECIMAL = /^(\d+)(?:\.(\d+))?$/;

/** `12`, `0.50` as a Scaled; null for anything else (a sign, an exponent). */
export function parseScaled(text: string): Scaled | null {
  const match = PLAIN_DECIMAL.exec(text);
  if (match === null) return null;
  const fraction = match[2] ?? '';
  return { units: BigInt(match[1]! + fraction), scale: fraction.length };
}

const POWERS_OF_TEN: bigint[] = [1n];
function tenTo(exponent: number): bigint {
  while (POWERS_OF_TEN.length <= exponent) POWERS_OF_TEN.push(POWERS_OF_TEN.at(-1)! * 10n);
  return POWERS_OF_TEN[exponent]!;
}

/** `units` ÷ 10^scale rounded to MONEY_SCALE decimals half to even, as units of 10^-18 (as toStoredDecimal rounds). */
export function storedUnits({ units, scale }: Scaled): bigint {
  if (scale <= MONEY_SCALE) return units * tenTo(MONEY_SCALE - scale);
  const divisor = tenTo(scale - MONEY_SCALE);
  const quotient = units / divisor;
  const twice = (units - quotient * divisor) * 2n;
  return twice > divisor || (twice === divisor && quotient % 2n === 1n) ? quotient + 1n : quotient;
}

/** Units of 10^-18 in toStoredDecimal's form: plain digits, no trailing zeros, `0` for zero. */
export function formatStoredUnits(units: bigint): string {
  const digits = units.toString().padStart(MONEY_SCALE + 1, '0');
  const whole = digits.slice(0, -MONEY_SCALE);
  let end = digits.length;
  while (end > whole.length && digits.charCodeAt(end - 1) === 48) end -= 1;
  return end === whole.length ? whole : `${whole}.${digits.slice(whole.length, end)}`;
}

/** toStoredDecimal of a plain non-negative decimal string, without Exact; null for anything else. */
export function storedDecimalOf(text: string): string | null {
  const scaled = parseScaled(text);
  return scaled === null ? null : formatStoredUnits(storedUnits(scaled));
}
