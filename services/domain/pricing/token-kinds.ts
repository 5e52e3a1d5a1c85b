import { TOKEN_KINDS, type TokenCounts, type TokenKind } from '../../../schemas/pricing-terms.ts';
import { Exact } from '../../shared/exact-decimal.ts';

export { TOKEN_KINDS, type TokenCounts, type TokenKind };

/**
 * What each kind is, as the genai-prices catalog's units describe it (prices/units.yml there): one kind
 * is part of another when its dimensions include all of the other's. The catalog prices a kind's own
 * part (its count less the parts of it that have a price of their own), so a model without a cached
 * price charges cached tokens as fresh input, as the provider bills them.
 */
const DIMENSIONS: Readonly<Record<TokenKind, Readonly<Record<string, string>>>> = {
  input_tokens: { direction: 'input' },
  cached_input_tokens: { direction: 'input', token_type: 'cache_read' },
  cache_write_tokens: { direction: 'input', token_type: 'cache_write' },
  audio_input_tokens: { direction: 'input', modality: 'audio' },
  cached_audio_input_tokens: { direction: 'input', modality: 'audio', token_type: 'cache_read' },
  image_input_tokens: { direction: 'input', modality: 'image' },
  cached_image_input_tokens: { direction: 'input', modality: 'image', token_type: 'cache_read' },
  output_tokens: { direction: 'output' },
  audio_output_tokens: { direction: 'output', modality: 'audio' },
  reasoning_tokens: { direction: 'output', token_type: 'reasoning' },
};

function isPartOf(part: TokenKind, whole: TokenKind): boolean {
  if (part === whole) return false;
  return Object.entries(DIMENSIONS[whole]).every(([dimension, value]) => DIMENSIONS[part][dimension] === value);
}

/** Every (part, whole) of the nesting, parts in TOKEN_KINDS order: computed once, not per event. */
const NESTING: readonly (readonly [TokenKind, TokenKind])[] = TOKEN_KINDS.flatMap((part) =>
  TOKEN_KINDS.filter((whole) => isPartOf(part, whole)).map((whole) => [part, whole] as const),
);

/** A count that breaks the nesting: a part larger than what it is part of. */
export class TokenCountError extends Error {
  constructor(
    readonly kind: TokenKind,
    message: string,
  ) {
    super(message);
    this.name = 'TokenCountError';
  }
}

/**
 * Every part larger than a whole it belongs to, as one message per part: `cached_input_tokens` over
 * `input_tokens`, `cached_audio_input_tokens` over `audio_input_tokens`, and so on. Audio and image
 * input are apart (one modality each); the overlap of cached input with each is its cached part (0 when
 * absent), so cached + audio + image − cached audio − cached image + cache writes must also fit in the
 * input.
 */
export function tokenCountProblems(counts: TokenCounts): TokenCountError[] {
  // Most events carry no token counts at all (minutes, characters): nothing can break the nesting.
  if (TOKEN_KINDS.every((kind) => counts[kind] === undefined)) return [];
  const value = (kind: TokenKind) => new Exact(counts[kind] ?? 0);
  const problems: TokenCountError[] = [];
  for (const [part, whole] of NESTING) {
    if (counts[part] !== undefined && value(part).greaterThan(value(whole))) {
      problems.push(
        new TokenCountError(
          part,
          `${part} (${value(part).toFixed()}) is more than ${whole} (${value(whole).toFixed()}), which includes it`,
        ),
      );
    }
  }
  const inputParts = value('cached_input_tokens')
    .plus(value('audio_input_tokens'))
    .minus(value('cached_audio_input_tokens'))
    .plus(value('image_input_tokens'))
    .minus(value('cached_image_input_tokens'))
    .plus(value('cache_write_tokens'));
  if (inputParts.greaterThan(value('input_tokens'))) {
    problems.push(
      new TokenCountError(
        'input_tokens',
        `input_tokens (${value('input_tokens').toFixed()}) is less than its cached, audio, image and cache-write parts together (${inputParts.toFixed()})`,
      ),
    );
  }
  const outputParts = value('audio_output_tokens').plus(value('reasoning_tokens'));
  if (outputParts.greaterThan(value('output_tokens'))) {
    problems.push(
      new TokenCountError(
        'output_tokens',
        `output_tokens (${value('output_tokens').toFixed()}) is less than its audio and reasoning parts together (${outputParts.toFixed()})`,
      ),
    );
  }
  return problems;
}

/**
 * The count each priced kind is charged for: its own tokens less those of its parts that are priced
 * on their own, so that the charged counts are disjoint and add up to input + output. A kind absent
 * from the event counts 0. `priced` are the kinds the rate in force has a price for; the result has
 * exactly those keys. The counts must be consistent (tokenCountProblems empty).
 */
export function chargedTokens(counts: TokenCounts, priced: ReadonlySet<TokenKind>): Map<TokenKind, Exact> {
  const charged = new Map<TokenKind, Exact>();
  for (const { kind, parts } of chargePlan(priced)) {
    let count = new Exact(counts[kind] ?? 0);
    for (const part of parts) count = count.minus(charged.get(part)!);
    charged.set(kind, count);
  }
  return charged;
}

interface PlanStep {
  readonly kind: TokenKind;
  /** The priced kinds that are part of this one, each charged before it. */
  readonly parts: readonly TokenKind[];
}
const plans = new Map<string, readonly PlanStep[]>();
const plansBySet = new WeakMap<ReadonlySet<TokenKind>, readonly PlanStep[]>();

/**
 * The order to charge a set of priced kinds in (the most specific first) and each one's priced parts; at
 * most 2^10 sets, each planned once, and a set seen before (a catalog price's) found by identity.
 */
function chargePlan(priced: ReadonlySet<TokenKind>): readonly PlanStep[] {
  const seen = plansBySet.get(priced);
  if (seen !== undefined) return seen;
  const key = TOKEN_KINDS.filter((kind) => priced.has(kind)).join(',');
  let plan = plans.get(key);
  if (plan === undefined) {
    const order = [...priced].sort(
      (a, b) => Object.keys(DIMENSIONS[b]).length - Object.keys(DIMENSIONS[a]).length || a.localeCompare(b),
    );
    plan = order.map((kind) => ({ kind, parts: order.filter((other) => isPartOf(other, kind)) }));
    plans.set(key, plan);
  }
  plansBySet.set(priced, plan);
  return plan;
}
