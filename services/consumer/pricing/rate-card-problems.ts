import type { Rate, RateCard } from '../../../schemas/rate-card.ts';
import { parseExact } from '../../shared/exact-decimal.ts';
import { lowerCaseAliases, resolveProvider } from './provider-names.ts';

/**
 * What the schema cannot say about a card, every problem at once so that one edit fixes them all.
 * Runs on the card as written; names are compared the way lookups compare them (lower-cased,
 * aliases resolved), so two entries a lookup could not tell apart are reported as duplicates.
 */
export function listRateCardProblems(card: RateCard): string[] {
  return [...aliasProblems(card.provider_aliases), ...card.rates.flatMap((rate) => rateProblems(card, rate)), ...duplicateProblems(card)];
}

function aliasProblems(aliases: Readonly<Record<string, string>>): string[] {
  const problems: string[] = [];
  const lowered = lowerCaseAliases(aliases);
  if (Object.keys(lowered).length !== Object.keys(aliases).length) problems.push('provider_aliases: two aliases differ only in case');
  for (const [alias, id] of Object.entries(lowered)) {
    // One step only: a chain would make the rate of a provider depend on the order of lookups.
    if (Object.hasOwn(lowered, id)) problems.push(`provider_aliases: "${alias}" points to "${id}", which is itself an alias`);
    if (id === '*') problems.push(`provider_aliases: "${alias}" points to "*"`);
  }
  return problems;
}

function rateProblems(card: RateCard, rate: Rate): string[] {
  const problems: string[] = [];
  const service = Object.hasOwn(card.services, rate.event_type) ? card.services[rate.event_type] : undefined;
  if (service === undefined) {
    problems.push(`rate ${rate.id}: unknown event_type "${rate.event_type}" (known: ${Object.keys(card.services).join(', ')})`);
  } else if (rate.unit !== service.unit) {
    problems.push(`rate ${rate.id}: unit "${rate.unit}" does not match the unit of ${rate.event_type}, "${service.unit}"`);
  }
  // The schema's pattern makes both parse; null only guards a card that skipped validation.
  if (!(parseExact(rate.price_per)?.greaterThan(0) ?? false)) problems.push(`rate ${rate.id}: price_per must be greater than 0, got "${rate.price_per}"`);
  if (!(parseExact(rate.price)?.greaterThanOrEqualTo(0) ?? false)) problems.push(`rate ${rate.id}: price must not be negative, got "${rate.price}"`);
  return problems;
}

function duplicateProblems(card: RateCard): string[] {
  const aliases = lowerCaseAliases(card.provider_aliases);
  const idsSeen = new Set<string>();
  const keysSeen = new Map<string, string>();
  const problems: string[] = [];
  for (const rate of card.rates) {
    if (idsSeen.has(rate.id)) problems.push(`rate ${rate.id}: duplicate id`);
    idsSeen.add(rate.id);
    const key = JSON.stringify([
      rate.event_type, resolveProvider(aliases, rate.provider), rate.model?.toLowerCase() ?? null, rate.user_id ?? null, rate.pricing, Date.parse(rate.effective_from),
    ]);
    const earlier = keysSeen.get(key);
    if (earlier !== undefined) problems.push(`rate ${rate.id}: same event_type, provider, model, user_id, pricing and effective_from as rate ${earlier}`);
    else keysSeen.set(key, rate.id);
  }
  return problems;
}
