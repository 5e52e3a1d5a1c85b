/** The pricing module's public surface: code outside services/domain/pricing imports from here only. */
export { loadCatalogs, type Catalogs } from './catalogs.ts';
export { type CostDimension } from './compute-cost.ts';
export { LISTED_LLM_PROVIDERS, LLM_CATALOG_VERSION } from './llm-catalog.ts';
export { DEFAULT_RATE_CARD_URL, loadRateCard, type RateCard } from './load-rate-card.ts';
export { priceUsage, type CostSource, type PricedUsage, type UsageToPrice } from './price-usage.ts';
export { listRateCardProblems } from './rate-card-problems.ts';
export { listRates, type RateListing } from './rate-listing.ts';
export { SpeechCatalog } from './speech-catalog.ts';
export { TenantRateIndex } from './tenant-rate-index.ts';
export { TenantRateCard, toCardEntry } from './tenant-rates.ts';
export { TOKEN_KINDS, tokenCountProblems, type TokenKind } from './token-kinds.ts';
// Rate cards for tests, built as the loader builds them.
export { makeCard, makeRate } from './pricing.fixtures.ts';
