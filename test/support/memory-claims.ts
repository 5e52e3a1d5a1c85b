import type { EventClaims } from '../../services/consumer/usage/event-claims.ts';

/**
 * The Redis claims' rule in memory (a key is kept by the first token that claims it until that token
 * releases it), for unit tests; `steps` notes each claim and each release of some keys, in order.
 */
export function memoryClaims(steps: string[]): EventClaims & { held: Map<string, string> } {
  const held = new Map<string, string>();
  return {
    held,
    claim: async (keys, token) => {
      steps.push(`claim ${token}`);
      const kept = new Set<string>();
      const fresh = new Set<string>();
      for (const key of keys) {
        if (!held.has(key)) {
          held.set(key, token);
          fresh.add(key);
        }
        if (held.get(key) === token) kept.add(key);
      }
      return { kept, fresh };
    },
    release: async (keys, token) => {
      if (keys.length > 0) steps.push(`release ${token}`);
      for (const key of keys) if (held.get(key) === token) held.delete(key);
    },
  };
}
