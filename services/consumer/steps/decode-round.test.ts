import { describe, expect, it } from 'vitest';
import { makeSessionEnvelope } from '../../../test/support/records.ts';
import { makeMember, makeMessage, makeRound } from '../../../test/support/rounds.ts';
import { decodeRound } from './decode-round.ts';

describe('decodeRound', () => {
  it('decodes each batch apart, under its own token, and keeps the records that fail as dead letters with their reason', () => {
    const session = makeSessionEnvelope();
    const first = makeMember([makeMessage(session, 7), makeMessage('not json', 8)], { partition: 0 });
    const second = makeMember([makeMessage('{"kind":"session"}', 3)], { partition: 1, uncertain: true });
    const { batches, undecodable } = decodeRound(makeRound([first, second]));

    expect(batches).toEqual([
      {
        items: [{ envelope: session, source: { partition: 0, offset: '7' }, at: 'usage/0/7' }],
        token: first.token,
        uncertain: false,
      },
      { items: [], token: second.token, uncertain: true },
    ]);
    expect(undecodable.map(({ member, message, reason }) => [member, message.offset, reason])).toEqual([
      [first, '8', 'record value is not JSON'],
      [second, '3', expect.stringMatching(/^invalid envelope/)],
    ]);
  });

  it('gives every row of a batch with a row source that source (the journal), and names each record by its place', () => {
    const sessions = [makeSessionEnvelope(), makeSessionEnvelope()];
    const journal = makeMember(
      sessions.map((session, i) => makeMessage(session, 40 + i, { headers: false })),
      { topic: 'journal', partition: -1, rowSource: { partition: -1, offset: '-1' } },
    );
    const { batches, places } = decodeRound(makeRound([journal]));

    expect(batches[0]!.items.map(({ source, at }) => [source, at])).toEqual([
      [{ partition: -1, offset: '-1' }, 'journal/-1/40'],
      [{ partition: -1, offset: '-1' }, 'journal/-1/41'],
    ]);
    expect(places.get('journal/-1/41')).toEqual({ member: journal, message: journal.messages[1] });
  });

  it('calls an empty value a dead letter, not a crash', () => {
    const member = makeMember([{ offset: '0', value: null }]);
    expect(decodeRound(makeRound([member])).undecodable).toEqual([
      { member, message: member.messages[0], reason: 'empty record value' },
    ]);
  });
});
