import { describe, expect, it } from 'vitest';
import { compileRequest } from '../compile-request.ts';
import { jsonBody, wireResponse } from '../test-support/wire-bytes.ts';
import {
  MAX_TRANSCRIPT_CHARS,
  transcriptCreateBody,
  transcriptCreateByRoomBody,
} from '../../../../schemas/http/transcript-create.ts';

const byRoom = compileRequest({ body: transcriptCreateByRoomBody });
const bySession = compileRequest({ body: transcriptCreateBody });
const reply = (check: typeof byRoom, value: unknown) => wireResponse(check, { body: jsonBody(JSON.stringify(value)) });

describe('transcript bodies', () => {
  it('takes content and a USER or AGENT speaker by room', () => {
    expect(reply(byRoom, { content: 'hello', speaker: 'AGENT' })).toEqual({
      status: 200,
      body: '{"content":"hello","speaker":"AGENT"}',
    });
  });

  it('refuses content past MAX_TRANSCRIPT_CHARS characters with string_too_long, and takes it at the bound', () => {
    expect(reply(byRoom, { content: 'é'.repeat(MAX_TRANSCRIPT_CHARS), speaker: 'USER' }).status).toBe(200);
    const answer = reply(byRoom, { content: 'x'.repeat(MAX_TRANSCRIPT_CHARS + 1), speaker: 'USER' });
    expect(answer.status).toBe(422);
    expect(JSON.parse(answer.body).detail[0]).toMatchObject({
      type: 'string_too_long',
      loc: ['body', 'content'],
      ctx: { max_length: MAX_TRANSCRIPT_CHARS },
    });
  });

  it('refuses another speaker as an enum error', () => {
    const answer = reply(byRoom, { content: 'hi', speaker: 'BOT' });
    expect(JSON.parse(answer.body).detail[0]).toMatchObject({ type: 'enum', loc: ['body', 'speaker'] });
  });

  it('requires session_id in the body of the by-session route, as the old TranscriptCreate did', () => {
    const answer = reply(bySession, { content: 'hi', speaker: 'USER' });
    expect([answer.status, JSON.parse(answer.body).detail]).toEqual([
      422,
      [
        {
          type: 'missing',
          loc: ['body', 'session_id'],
          msg: 'Field required',
          input: { content: 'hi', speaker: 'USER' },
        },
      ],
    ]);
  });
});
