/** Alias map with both sides lower-cased: provider ids are compared without case. */
export function lowerCaseAliases(aliases: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(aliases).map(([alias, id]) => [alias.toLowerCase(), id.toLowerCase()]));
}

/**
 * The provider id whose rates apply to `provider` (lower-cased, then one alias step). It only
 * chooses the rate: callers keep storing the provider as sent, lower-cased.
 */
export function resolveProvider(aliases: Readonly<Record<string, string>>, provider: string): string {
  const lower = provider.toLowerCase();
  return Object.hasOwn(aliases, lower) ? (aliases[lower] ?? lower) : lower;
}
