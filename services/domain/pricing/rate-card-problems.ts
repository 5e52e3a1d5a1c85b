import type { RateCardFile, RateEntry } from '../../../schemas/rate-card.ts';
import { USAGE_LIMITS } from '../../../schemas/records/usage.ts';
import { Exact, parseExact } from '../../shared/exact-decimal.ts';
import { listEntryEventTypes } from './entry-event-types.ts';
import { lowerCaseAliases, resolveProvider } from './provider-names.ts';
import { currencyProblems } from './pricing-currency.ts';

/**
 * What the schema cannot say about a card, every problem at once so that one edit fixes them all.
 * Runs on the card as written; names are compared the way lookups compare them (lower-cased,
 * aliases resolved), so two entries a lookup could not tell apart are reported as duplicates.
 */
export function listRateCardProblems(card: RateCardFile): string[] {
  return [
    ...aliasProblems(card.provider_aliases),
    ...card.rates.flatMap((rate) => rateProblems(card, rate)),
    ...duplicateProblems(card),
    ...currencyProblems(card),
  ];
}

function aliasProblems(aliases: Readonly<Record<string, string>>): string[] {
  const problems: string[] = [];
  const lowered = lowerCaseAliases(aliases);
  if (Object.keys(lowered).length !== Object.keys(aliases).length)
    problems.push('provider_aliases: two aliases differ only in case');
  for (const [alias, id] of Object.entries(lowered)) {
    // One step only: a chain would make the rate of a provider depend on the order of lookups.
    if (Object.hasOwn(lowered, id))
      problems.push(`provider_aliases: "${alias}" points to "${id}", which is itself an alias`);
    if (id === '*') problems.push(`provider_aliases: "${alias}" points to "*"`);
  }
  return problems;
}

function rateProblems(card: RateCardFile, rate: RateEntry): string[] {
  const problems = eventTypeProblems(card.services, rate);
  // The schema's pattern makes both parse; null only guards a card that skipped validation.
  const perOk = parseExact(rate.price_per)?.greaterThan(0) ?? false;
  const priceOk = parseExact(rate.price)?.greaterThanOrEqualTo(0) ?? false;
  if (!perOk) problems.push(`rate ${rate.id}: price_per must be greater than 0, got "${rate.price_per}"`);
  if (!priceOk) problems.push(`rate ${rate.id}: price must not be negative, got "${rate.price}"`);
  if (perOk && priceOk) problems.push(...ratePerUnitProblems(rate));
  return problems;
}

const MAX_RATE_PER_UNIT = new Exact(USAGE_LIMITS.MAX_RATE_PER_UNIT);

/**
 * An event's quantity (and each token side) is at most MAX_QUANTITY, so a rate of at most
 * MAX_RATE_PER_UNIT keeps every computed cost within MAX_EVENT_COST, which the columns and sums hold.
 */
function ratePerUnitProblems(rate: RateEntry): string[] {
  const perUnit = new Exact(rate.price).dividedBy(rate.price_per);
  if (perUnit.lessThanOrEqualTo(MAX_RATE_PER_UNIT)) return [];
  return [
    `rate ${rate.id}: price ÷ price_per is ${perUnit.toFixed()} per ${rate.unit}, over the limit of ${MAX_RATE_PER_UNIT.toFixed()} (so that an event of at most ${USAGE_LIMITS.MAX_QUANTITY} units costs at most ${USAGE_LIMITS.MAX_EVENT_COST})`,
  ];
}

/** What the entry prices: exactly one of event_type and service, known, in the unit of each event type. */
function eventTypeProblems(services: RateCardFile['services'], rate: RateEntry): string[] {
  if (rate.event_type !== undefined && rate.service !== undefined) {
    return [
      `rate ${rate.id}: names both event_type "${rate.event_type}" and service "${rate.service}"; an entry names one of them`,
    ];
  }
  if (rate.event_type === undefined && rate.service === undefined)
    return [`rate ${rate.id}: names neither event_type nor service; an entry names one of them`];
  if (rate.event_type !== undefined && !Object.hasOwn(services, rate.event_type)) {
    return [`rate ${rate.id}: unknown event_type "${rate.event_type}" (known: ${Object.keys(services).join(', ')})`];
  }
  const eventTypes = listEntryEventTypes(services, rate);
  if (eventTypes.length === 0) {
    const known = [...new Set(Object.values(services).map((described) => described.service))];
    return [`rate ${rate.id}: unknown service "${rate.service}" (known: ${known.join(', ')})`];
  }
  // A service entry is checked against every event type it prices, as if written once for each.
  const ofService = rate.service === undefined ? '' : ` (service ${rate.service})`;
  return eventTypes.flatMap((eventType) => {
    const unit = services[eventType]?.unit;
    return unit === rate.unit
      ? []
      : [`rate ${rate.id}: unit "${rate.unit}" does not match the unit of ${eventType}, "${unit}"${ofService}`];
  });
}

/**
 * Checked on the entries as written. Ids are unique among entries, not among loaded rates: a service
 * entry becomes one rate per event type, all under the entry's id, since the stored rate_id names the
 * entry that priced an event. Two entries have the same key only when both name the same event_type
 * or both the same service: an event_type entry beside a service entry covering it is no overlap,
 * since lookups rank the event_type entry first (find-rate.ts): no event has two equal candidates.
 */
function duplicateProblems(card: RateCardFile): string[] {
  const aliases = lowerCaseAliases(card.provider_aliases);
  const idsSeen = new Set<string>();
  const keysSeen = new Map<string, string>();
  const problems: string[] = [];
  for (const rate of card.rates) {
    if (idsSeen.has(rate.id)) problems.push(`rate ${rate.id}: duplicate id`);
    idsSeen.add(rate.id);
    const key = JSON.stringify([
      rate.event_type ?? null,
      rate.service ?? null,
      resolveProvider(aliases, rate.provider),
      rate.model?.toLowerCase() ?? null,
      rate.user_id ?? null,
      rate.pricing,
      Date.parse(rate.effective_from),
    ]);
    const earlier = keysSeen.get(key);
    const named = rate.event_type === undefined ? 'service' : 'event_type';
    if (earlier !== undefined)
      problems.push(
        `rate ${rate.id}: same ${named}, provider, model, user_id, pricing and effective_from as rate ${earlier}`,
      );
    else keysSeen.set(key, rate.id);
  }
  return problems;
}
