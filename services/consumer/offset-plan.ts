import type { Admin } from 'kafkajs';

/**
 * Where a batch ends must survive a crash: an insert that is replayed with other boundaries would
 * carry another deduplication token and be stored twice. Before inserting, the runner commits the
 * batch's first offset again with {"last": …} as commit metadata (a write-ahead plan, stored by
 * Kafka with the offset itself). After a restart, a batch that starts at a planned offset is cut at
 * the planned last offset, so the replay is the same insert with the same token.
 */
export interface OffsetPlan {
  readonly first: string;
  readonly last: string;
}

/** The ClickHouse deduplication token prefix of a batch: the same offsets always give the same token. */
export function batchToken(groupId: string, topic: string, partition: number, first: string, last: string): string {
  return `${groupId}:${topic}:${partition}:${first}-${last}`;
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

export function encodePlan(last: string): string {
  return JSON.stringify({ last });
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
      return { first, last: parsed.last };
    }
  } catch {
    // metadata written by something else: no plan
  }
  return null;
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

  forgetAll(): void {
    this.next.clear();
  }
}
