import { compareDecimals, decimalPartsOf, formatDecimal, parseDecimalText, type DecimalParts } from './decimal-text.ts';
import { BOUND_ORDER, boundError, laxFail, laxOk, plainError, type BoundKeyword, type Lax } from './pydantic-errors.ts';
import { PyFloat } from './py-value.ts';

/**
 * pydantic's lax `Decimal` (`input_python.rs` validate_decimal, `validators/decimal.rs`): ints,
 * floats and strings; bools, null, lists and dicts are decimal_type; NaN and infinities are
 * finite_number. A JSON float keeps its literal text (pydantic goes through `str(float)`, which
 * only differs past 17 significant digits), so no money value ever passes through a JS float.
 */
export function laxDecimal(input: unknown): Lax<DecimalParts> {
  if (typeof input === 'bigint')
    return laxOk({ negative: input < 0n, coefficient: input < 0n ? -input : input, exponent: 0n });
  if (input instanceof PyFloat) return floatDecimal(input.value, input.text);
  if (typeof input === 'number') return floatDecimal(input, String(input));
  if (typeof input !== 'string') return laxFail(plainError('decimal_type'));
  const parsed = parseDecimalText(input);
  if (parsed.kind === 'invalid') return laxFail(plainError('decimal_parsing'));
  if (parsed.kind === 'nonFinite') return laxFail(plainError('finite_number'));
  return laxOk(parsed.parts);
}

function floatDecimal(value: number, text: string): Lax<DecimalParts> {
  if (!Number.isFinite(value)) return laxFail(plainError('finite_number'));
  return laxOk(decimalPartsOf(text));
}

export type DecimalBounds = Partial<Record<BoundKeyword, number>>;

/**
 * The exact-decimal twin of ajv's numeric keywords, which cannot see a decimal held as text.
 * Built once per field; checks in pydantic's order (le, lt, ge, gt).
 */
export function decimalBoundsCheck(bounds: DecimalBounds): (value: DecimalParts) => Lax<string> {
  const limits = BOUND_ORDER.flatMap((keyword) => {
    const limit = bounds[keyword];
    return limit === undefined ? [] : [{ keyword, limit, parts: decimalPartsOf(String(limit)) }];
  });
  return (value) => {
    for (const { keyword, limit, parts } of limits) {
      const order = compareDecimals(value, parts);
      const within = {
        maximum: order <= 0,
        exclusiveMaximum: order < 0,
        minimum: order >= 0,
        exclusiveMinimum: order > 0,
      }[keyword];
      if (!within) return laxFail(boundError(keyword, limit));
    }
    return laxOk(formatDecimal(value));
  };
}
