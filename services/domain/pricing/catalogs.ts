import { LlmCatalog } from './llm-catalog.ts';
import { SpeechCatalog } from './speech-catalog.ts';
import { PRICING_CURRENCY } from './pricing-currency.ts';

/** The built-in prices beneath the rate card: the card's entries, and a tenant's, win over them. */
export interface Catalogs {
  readonly llm: LlmCatalog;
  readonly speech: SpeechCatalog;
  /** Both catalogs are in US dollars: the one currency priced (pricing-currency.ts). */
  readonly currency: typeof PRICING_CURRENCY;
}

/** Reads the speech catalog file (and checks it); the LLM catalog is the pinned package's bundled data. */
export function loadCatalogs(): Catalogs {
  return { llm: new LlmCatalog(), speech: SpeechCatalog.load(), currency: PRICING_CURRENCY };
}
