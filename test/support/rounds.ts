import { encodeRecord, type Envelope } from '../../services/domain/records/index.ts';
import type { Round, RoundMember, SourceMessage } from '../../services/consumer/round.ts';

/**
 * A record at `offset` as Kafka hands it over (key, value and the headers ingest sets); a string is a
 * value as it came, which need not decode. `headers: false`: a journal entry, which has none.
 */
export function makeMessage(
  record: Envelope | string,
  offset: number | string,
  { headers = true }: { headers?: boolean } = {},
): SourceMessage {
  if (typeof record === 'string') return { offset: String(offset), value: Buffer.from(record, 'utf8'), key: null };
  const encoded = encodeRecord(record);
  return {
    offset: String(offset),
    value: Buffer.from(encoded.value),
    key: Buffer.from(encoded.key),
    ...(headers ? { headers: encoded.headers } : {}),
  };
}

/** One partition's batch of a round (topic "usage", partition 0, its token from its first and last offsets); override any field. */
export function makeMember(messages: readonly SourceMessage[], overrides: Partial<RoundMember> = {}): RoundMember {
  const partition = overrides.partition ?? 0;
  return {
    topic: 'usage',
    partition,
    messages,
    token: `g:usage:${partition}:${messages[0]?.offset ?? 0}-${messages.at(-1)?.offset ?? 0}`,
    uncertain: false,
    ...overrides,
  };
}

export function makeRound(members: readonly RoundMember[], token = 'g:usage:round:1'): Round {
  return { members, token };
}
