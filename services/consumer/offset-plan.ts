import type { Admin } from 'kafkajs';

/**
 * Where a batch ends must survive a crash: an insert that is replayed with other boundaries would
 * carry another deduplication token and be stored twice. Before inserting, the runner commits the
 * batch's first offset again with {"last": …} as commit metadata (a write-ahead plan, stored by
 * Kafka with the offset itself). After a restart, a batch that starts at a planned offset is cut at
 * the planned last offset, so the replay is the same insert with the same token. A batch stored in a
 * round (kafka-rounds.ts) also names its round: the round is replayed under the same token when all
 * of its members come back to one consumer, and otherwise its members are uncertain (see RoundPlan).
 */
export interface OffsetPlan {
  readonly first: string;
  readonly last: string;
  /** The round the batch was planned in (gathered topics); absent for a batch planned alone. */
  readonly round?: RoundPlan;
}

/**
 * A round: the batches of several partitions stored by one insert per table. Every member's plan names
 * the round and how many members it has, so that a consumer holding them all replays the same insert
 * under the same token; `uncertain` marks a member whose events may already be stored under another
 * round's token (planned in a round that could not be replayed whole), whose replay leaves out what is stored.
 */
export interface RoundPlan {
  readonly id: string;
  readonly members: number;
  readonly uncertain: boolean;
}

/** The ClickHouse deduplication token prefix of a batch: the same offsets always give the same token. */
export function batchToken(groupId: string, topic: string, partition: number, first: string, last: string): string {
  return `${groupId}:${topic}:${partition}:${first}-${last}`;
}

/** The ClickHouse deduplication token prefix of a round: its id is kept in every member's plan. */
export function roundToken(groupId: string, topic: string, id: string): string {
  return `${groupId}:${topic}:round:${id}`;
}

/**
 * The tokens of the batches the group planned and has not committed past: the only batches stored
 * before now that a consumer may replay. Read before consuming, after a crash.
 */
export async function plannedTokens(
  admin: Pick<Admin, 'fetchOffsets'>,
  groupId: string,
  topics: readonly string[],
): Promise<Set<string>> {
  const tokens = new Set<string>();
  for (const { topic, partitions } of await admin.fetchOffsets({ groupId, topics: [...topics] })) {
    for (const { partition, offset, metadata } of partitions) {
      const plan = decodePlan(offset, metadata);
      if (plan !== null) tokens.add(batchToken(groupId, topic, partition, plan.first, plan.last));
    }
  }
  return tokens;
}

export function encodePlan(last: string, round?: RoundPlan): string {
  if (round === undefined) return JSON.stringify({ last });
  return JSON.stringify({
    last,
    round: round.id,
    members: round.members,
    ...(round.uncertain ? { uncertain: 1 } : {}),
  });
}

export function decodePlan(first: string, metadata: string | null | undefined): OffsetPlan | null {
  if (metadata === null || metadata === undefined || metadata === '') return null;
  try {
    const parsed: unknown = JSON.parse(metadata);
    if (
      typeof parsed === 'object' &&
      parsed !== null &&
      'last' in parsed &&
      typeof parsed.last === 'string' &&
      /^\d+$/.test(parsed.last)
    ) {
      const round = decodeRound(parsed);
      return round === null ? { first, last: parsed.last } : { first, last: parsed.last, round };
    }
  } catch {
    // metadata written by something else: no plan
  }
  return null;
}

function decodeRound(parsed: object): RoundPlan | null {
  if (!('round' in parsed) || typeof parsed.round !== 'string' || !/^[0-9a-f]{1,64}$/.test(parsed.round)) return null;
  if (!('members' in parsed) || !Number.isSafeInteger(parsed.members) || (parsed.members as number) < 1) return null;
  return { id: parsed.round, members: parsed.members as number, uncertain: 'uncertain' in parsed };
}

/** Remembers what this process committed, and asks the broker only for partitions it has not seen. */
export class OffsetPlans {
  private readonly next = new Map<string, string>();

  constructor(
    private readonly admin: Admin,
    private readonly groupId: string,
  ) {}

  async planFor(topic: string, partition: number, first: string): Promise<OffsetPlan | null> {
    if (this.next.get(`${topic}:${partition}`) === first) return null;
    const [committed] = await this.admin.fetchOffsets({ groupId: this.groupId, topics: [topic] });
    const entry = committed?.partitions.find((p) => p.partition === partition);
    if (entry === undefined || entry.offset !== first) return null;
    return decodePlan(first, entry.metadata);
  }

  committed(topic: string, partition: number, nextOffset: string): void {
    this.next.set(`${topic}:${partition}`, nextOffset);
  }

  /** The next batch of this partition is read from the broker's plan again (a round that gave up). */
  forget(topic: string, partition: number): void {
    this.next.delete(`${topic}:${partition}`);
  }

  forgetAll(): void {
    this.next.clear();
  }
}
