import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Exact } from '../../services/shared/exact-decimal.ts';

/** Deepgram's price drops from 0.0077 to 0.0050 a minute here: events before keep the old rate. */
export const RATE_CHANGE_AT = Date.UTC(2026, 9, 20); // 2026-10-20

/** The default rate card plus a later deepgram entry, written into `dir`; returns its path. */
export function writeRateCardWithChange(dir: string): string {
  const card = JSON.parse(
    readFileSync(path.resolve(import.meta.dirname, '../../infra/rate-card/rate-card.json'), 'utf8'),
  ) as { rates: unknown[] };
  card.rates.push({
    id: 'stt-deepgram-2026-10',
    event_type: 'stt_minutes',
    provider: 'deepgram',
    unit: 'minute',
    price: '0.0050',
    price_per: '1',
    pricing: 'quantity',
    effective_from: new Date(RATE_CHANGE_AT).toISOString(),
    note: 'test: a price change',
  });
  const file = path.join(dir, 'rate-card.json');
  writeFileSync(file, JSON.stringify(card));
  return file;
}

export interface GeneratedSession {
  readonly room_name: string;
  readonly user_id: string;
  readonly agent_id: string | null;
  readonly agent_name: string | null;
}

export interface GeneratedEvent {
  readonly body: Record<string, unknown>;
  readonly sessionIndex: number;
  readonly at: number;
  /** The cost the default card (with the change above) gives, worked out here by hand. */
  readonly cost: Exact;
}

/** A small deterministic PRNG (mulberry32), so a failure can be replayed from its seed. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function makeSessions(user: string, other: string): GeneratedSession[] {
  const agents: (string | null)[] = [
    'agent-a',
    'agent-b',
    'agent-c',
    'agent-d',
    null,
    'agent-a',
    'agent-b',
    null,
    'agent-c',
    'agent-a',
  ];
  const names: Record<string, string> = { 'agent-a': 'Front desk', 'agent-b': 'Billing, "West"' };
  return [
    ...agents.map((agent_id, i) => ({
      room_name: `${user}-room-${i}`,
      user_id: user,
      agent_id,
      agent_name: agent_id === null ? null : (names[agent_id] ?? null),
    })),
    { room_name: `${other}-room`, user_id: other, agent_id: 'agent-a', agent_name: 'Someone else' },
  ];
}

/**
 * Usage spread over the `days` before `nowMs` at odd minutes, mixing every body shape, provider and
 * service: priced, across the rate change, and one provider the card does not know (its reported
 * total is used).
 */
export function makeEvents(
  random: () => number,
  count: number,
  sessions: readonly GeneratedSession[],
  nowMs: number,
  days: number,
): GeneratedEvent[] {
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
  return Array.from({ length: count }, () => {
    const sessionIndex = Math.floor(random() * sessions.length);
    const at = nowMs - 60_000 - Math.floor(random() * days * 86_400_000);
    const base = {
      user_id: sessions[sessionIndex]!.user_id,
      event_id: randomUUID(),
      timestamp: new Date(at).toISOString(),
    };
    const kind = pick(['deepgram', 'assemblyai', 'google', 'resemble', 'acme'] as const);
    if (kind === 'deepgram') {
      const minutes = new Exact(Math.floor(random() * 50_000)).div(1000);
      return {
        sessionIndex,
        at,
        body: { ...base, provider: 'Deepgram', event_type: 'stt_minutes', quantity: minutes.toFixed() },
        cost: minutes.times(at >= RATE_CHANGE_AT ? '0.0050' : '0.0077'),
      };
    }
    if (kind === 'assemblyai') {
      const seconds = 3 * Math.floor(random() * 400);
      return {
        sessionIndex,
        at,
        body: {
          ...base,
          provider: 'assemblyai',
          event_type: 'stt_minutes',
          usage_data: { audio_duration_seconds: seconds },
        },
        cost: new Exact(seconds).div(60).times('0.0078'),
      };
    }
    if (kind === 'google') {
      const tokens = Math.floor(random() * 5000);
      return {
        sessionIndex,
        at,
        body: { ...base, provider: 'gemini', event_type: 'llm_tokens', quantity: tokens },
        cost: new Exact(tokens).times('0.00086').div(1000),
      };
    }
    if (kind === 'resemble') {
      const characters = Math.floor(random() * 2000);
      return {
        sessionIndex,
        at,
        body: {
          ...base,
          provider: 'resemble',
          event_type: 'tts_characters',
          usage_data: { character_count: characters },
        },
        cost: new Exact(characters).times('0.00004'),
      };
    }
    // Thousands with all 18 decimals: a total that 20 significant digits would round.
    const digits = (n: number) => String(Math.floor(random() * 10 ** n)).padStart(n, '0');
    const reported = new Exact(`${Math.floor(random() * 5000)}.${digits(9)}${digits(9)}`);
    return {
      sessionIndex,
      at,
      body: { ...base, provider: 'acme', event_type: 'tts_characters', quantity: 10, total_cost: reported.toFixed() },
      cost: reported,
    };
  });
}

export function sumOf(events: readonly GeneratedEvent[]): Exact {
  return events.reduce((sum, event) => sum.plus(event.cost), new Exact(0));
}
