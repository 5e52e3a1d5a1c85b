import { describe, expect, it } from 'vitest';
import { makeSession, T0 } from './session.fixtures.ts';
import { sessionAnalysis } from './session-response.ts';
import { toSessionResponse } from './session.ts';

describe('toSessionResponse', () => {
  it('writes every key in the order of the old service, null where unknown', () => {
    const response = toSessionResponse(makeSession({ id: 's-1', room_name: 'room-1' }));
    expect(JSON.stringify(response)).toBe(
      '{"room_name":"room-1","session_data":{},"id":"s-1","status":"ACTIVE","started_at":"2026-11-22T01:29:17.578Z",' +
        '"ended_at":null,"duration":null,"user_id":"user-1","agent_id":null,"agent_name":null,"call_direction":null,' +
        '"outbound_phone_number":null,"call_status":null,"analysis":null,"transferred_to":null,"transfer_type":null,' +
        '"transfer_timestamp":null,"created_at":"2026-11-22T01:29:17.578Z","updated_at":"2026-11-22T01:29:17.578Z",' +
        '"direction":null,"metadata":{}}',
    );
  });

  it('writes datetimes as ISO 8601 UTC with milliseconds and Z', () => {
    const response = toSessionResponse(
      makeSession({ ended_at: T0 + 1_000, transfer_timestamp: Date.UTC(2026, 0, 2, 3, 4, 5, 6) }),
    );
    expect(response).toMatchObject({
      ended_at: '2026-11-22T01:29:18.578Z',
      transfer_timestamp: '2026-01-02T03:04:05.006Z',
    });
  });

  it('takes analysis from the session, else from session_data.analysis', () => {
    const inData = makeSession({ session_data: { analysis: { from: 'data' } } });
    expect(toSessionResponse(inData).analysis).toEqual({ from: 'data' });
    expect(toSessionResponse({ ...inData, analysis: { from: 'session' } }).analysis).toEqual({ from: 'session' });
    expect(toSessionResponse(makeSession({ session_data: { analysis: 'not an object' } })).analysis).toBeNull();
  });

  it('writes direction as the lower-case call_direction and metadata as session_data', () => {
    const response = toSessionResponse(makeSession({ call_direction: 'OUTBOUND', session_data: { lang: 'en' } }));
    expect(response).toMatchObject({ call_direction: 'OUTBOUND', direction: 'outbound', metadata: { lang: 'en' } });
  });

  it('answers the analysis as the old service did: the session’s, else session_data.analysis of any type, else null', () => {
    expect(sessionAnalysis(makeSession({ analysis: { summary: 'ok' } }))).toEqual({ summary: 'ok' });
    expect(sessionAnalysis(makeSession({ session_data: { analysis: 'text' } }))).toBe('text');
    expect(sessionAnalysis(makeSession())).toBeNull();
  });

  it('does not expose the internal version', () => {
    expect(toSessionResponse(makeSession())).not.toHaveProperty('version');
  });
});
