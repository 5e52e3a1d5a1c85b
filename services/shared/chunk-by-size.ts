/**
 * Consecutive runs of `items` whose sizes add up to at most `max`, in order; an item larger than `max`
 * is a run of its own. Shared by the Kafka sends (bytes a request may carry) and the stored-id lookup
 * (characters a URL may carry).
 */
export function chunkBySize<T>(items: readonly T[], sizeOf: (item: T) => number, max: number): T[][] {
  const chunks: T[][] = [];
  let current: T[] = [];
  let total = 0;
  for (const item of items) {
    const size = sizeOf(item);
    if (current.length > 0 && total + size > max) {
      chunks.push(current);
      current = [];
      total = 0;
    }
    current.push(item);
    total += size;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}
