import { describe, expect, it } from 'vitest';
import { createLogger } from '../../shared/logger.ts';
import type { Envelope } from '../../domain/records/index.ts';
import { createSessionService } from '../sessions/session-service.ts';
import { MemorySessionStore } from '../sessions/memory-session-store.ts';
import { T0 } from '../sessions/session.fixtures.ts';
import { createTranscriptService } from './transcript-service.ts';
import type { Transcript } from './transcript.ts';

const log = createLogger('silent');

function makeServices(history: Transcript[] = []) {
  const published: Envelope[] = [];
  const sink = { publish: async (envelopes: readonly Envelope[]) => void published.push(...envelopes) };
  const sessions = createSessionService({ store: new MemorySessionStore(), sink, log, now: () => T0 });
  const transcripts = createTranscriptService({
    sessions,
    history: { list: async () => history },
    sink,
    log,
    now: () => T0,
  });
  return { sessions, transcripts, published };
}

describe('transcript service', () => {
  it('publishes one record per turn, by room or by id, for the room’s latest session', async () => {
    const { sessions, transcripts, published } = makeServices();
    const session = await sessions.create({ room_name: 'call-1', user_id: 'u' });
    published.length = 0;
    const first = await transcripts.addByRoom('call-1', { content: 'Hi', speaker: 'USER' });
    const second = await transcripts.add(session.id, { content: 'Hello', speaker: 'AGENT' });
    expect([first.session_id, second.session_id]).toEqual([session.id, session.id]);
    expect(second.timestamp).toBeGreaterThan(first.timestamp);
    expect(published.map((e) => [e.kind, e.key, (e.payload as { id: string }).id])).toEqual([
      ['transcript', session.id, first.id],
      ['transcript', session.id, second.id],
    ]);
  });

  it('answers 404 Session not found for an unknown session or room and publishes nothing', async () => {
    const { transcripts, published } = makeServices();
    await expect(transcripts.addByRoom('nobody', { content: 'x', speaker: 'USER' })).rejects.toMatchObject({
      code: 'NOT_FOUND',
      message: 'Session not found',
    });
    await expect(
      transcripts.add('00000000-0000-4000-8000-000000000000', { content: 'x', speaker: 'USER' }),
    ).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(published).toEqual([]);
  });

  it('a history that does not answer is a 503, not a 500', async () => {
    const { sessions } = makeServices();
    const transcripts = createTranscriptService({
      sessions,
      history: { list: () => Promise.reject(new Error('engine down')) },
      sink: { publish: async () => {} },
      log,
    });
    await expect(transcripts.list('s')).rejects.toMatchObject({ code: 'DEPENDENCY_UNAVAILABLE' });
  });
});
