import type { RateCardFile } from '../../../schemas/rate-card.ts';

/**
 * The one currency callmeter prices in: the built-in catalogs' (llm and speech), which price every
 * event the card has no entry for. Costs are summed per tenant without a conversion, so a card, a card
 * entry or a tenant entry in another currency would add two currencies into one total: each is refused
 * where it comes in (the card at load, a tenant entry at POST /api/rates) rather than converted.
 */
export const PRICING_CURRENCY = 'USD';

/** A card in another currency than the catalogs', and every entry in another currency than the card's. */
export function currencyProblems(card: RateCardFile): string[] {
  const problems: string[] = [];
  if (card.currency !== PRICING_CURRENCY)
    problems.push(
      `currency: the card is in ${card.currency}, but the built-in catalogs that price what it lacks are in ${PRICING_CURRENCY}; costs are summed without conversion, so the card must be in ${PRICING_CURRENCY}`,
    );
  for (const rate of card.rates) {
    if (rate.currency !== undefined && rate.currency !== card.currency)
      problems.push(
        `rate ${rate.id}: currency ${rate.currency} is not the card's ${card.currency}; costs are summed without conversion`,
      );
  }
  return problems;
}
