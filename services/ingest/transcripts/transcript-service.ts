import { randomUUID } from 'node:crypto';
import { AppError } from '../../shared/errors.ts';
import type { Logger } from '../../shared/logger.ts';
import type { RecordSink } from '../../domain/records/index.ts';
import type { TranscriptHistory } from './transcript-history.ts';
import type { SessionService } from '../sessions/session-service.ts';
import type { Session } from '../sessions/session.ts';
import { monotonicClock, transcriptEnvelope, type Speaker, type Transcript } from './transcript.ts';

export interface TranscriptServiceDeps {
  readonly sessions: Pick<SessionService, 'get' | 'getByRoom'>;
  readonly history: Pick<TranscriptHistory, 'list'>;
  readonly sink: RecordSink;
  readonly log: Logger;
  readonly now?: () => number;
}

export interface TranscriptTurn {
  readonly content: string;
  readonly speaker: Speaker;
}

/**
 * A turn is answered once its record is durable (the record path stores it in ClickHouse, exactly
 * once per record); reads come from ClickHouse, so a turn shows there once the consumer wrote it.
 * A session of any status takes turns, as the old service's did; an unknown one is a 404.
 */
export function createTranscriptService({ sessions, history, sink, log, now = Date.now }: TranscriptServiceDeps) {
  const clock = monotonicClock(now);

  async function add(session: Session, turn: TranscriptTurn): Promise<Transcript> {
    const transcript: Transcript = {
      id: randomUUID(),
      session_id: session.id,
      content: turn.content,
      speaker: turn.speaker,
      timestamp: clock(),
    };
    await sink.publish([transcriptEnvelope(transcript, now())]);
    return transcript;
  }

  async function visible(sessionId: string, tenant: string): Promise<boolean> {
    try {
      await sessions.get(sessionId, tenant);
      return true;
    } catch (error) {
      if (error instanceof AppError && error.code === 'NOT_FOUND') return false;
      throw error;
    }
  }

  return {
    add: async (sessionId: string, turn: TranscriptTurn, tenant: string | null = null) =>
      add(await sessions.get(sessionId, tenant), turn),
    /** `userId`: the tenant the request names, whose room it is (SessionService.getByRoom). */
    addByRoom: async (roomName: string, turn: TranscriptTurn, userId: string | null = null) =>
      add(await sessions.getByRoom(roomName, userId), turn),
    /**
     * Oldest first, at most MAX_TRANSCRIPT_TURNS; an unknown session has none (as the old service
     * answered), and so has another tenant's for a bound credential (`tenant`): the same answer.
     */
    async list(sessionId: string, tenant: string | null = null): Promise<Transcript[]> {
      if (tenant !== null && !(await visible(sessionId, tenant))) return [];
      try {
        return await history.list(sessionId);
      } catch (error) {
        log.warn({ err: error }, 'transcript_read_failed');
        throw AppError.of('DEPENDENCY_UNAVAILABLE', 'Transcripts are unavailable; retry the request.', {
          cause: error,
          headers: { 'Retry-After': '1' },
        });
      }
    },
  };
}

export type TranscriptService = ReturnType<typeof createTranscriptService>;
