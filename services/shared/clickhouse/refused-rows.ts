/**
 * ClickHouse error codes that refuse an insert for what its rows hold, whatever the server's state:
 * values it cannot parse or convert, and decimals too big for their column. A repeat of the same rows
 * fails the same way for ever, so retrying them would stall everything queued behind them. Every
 * other error (a server down, a timeout, too many parts waiting for merges, a constraint of ours) is an
 * outage: it pauses and retries, never skips.
 */
const DATA_REFUSALS = new Set([
  '6', // CANNOT_PARSE_TEXT
  '26', // CANNOT_PARSE_QUOTED_STRING
  '27', // CANNOT_PARSE_INPUT_ASSERTION_FAILED
  '38', // CANNOT_PARSE_DATE
  '41', // CANNOT_PARSE_DATETIME
  '53', // TYPE_MISMATCH
  '69', // ARGUMENT_OUT_OF_BOUND ("Decimal value is too big")
  '70', // CANNOT_CONVERT_TYPE
  '72', // CANNOT_PARSE_NUMBER
  '117', // INCORRECT_DATA
  '321', // VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE
  '407', // DECIMAL_OVERFLOW
]);

/** True when ClickHouse refused an insert for its rows themselves (see DATA_REFUSALS). */
export function refusedForData(error: unknown): boolean {
  if (!(error instanceof Error) || !('code' in error)) return false;
  const code = String(error.code);
  // 252 is also "too many parts" while merges lag behind, which passes: only the per-insert partition
  // limit is the rows' own doing (an insert spanning more months than max_partitions_per_insert_block).
  if (code === '252') return /partitions for single INSERT block/i.test(error.message);
  return DATA_REFUSALS.has(code);
}

/** What a client or a dead letter is told of a refusal: the ClickHouse error's type, no internals. */
export function refusalReason(error: unknown): string {
  const type = error instanceof Error && 'type' in error ? String(error.type) : 'unknown';
  const message = error instanceof Error ? error.message.split('\n')[0]!.slice(0, 300) : String(error);
  return `ClickHouse refused the record (${type}): ${message}`;
}

export interface Refused<T> {
  readonly item: T;
  readonly reason: string;
}

/**
 * Stores `items` with `attempt`; when ClickHouse refuses them for what they hold, halves them until
 * each item at fault stands alone, and returns those (everything else is stored). A refused insert
 * stores nothing, so a part is only ever stored once. Each part's token is its whole's plus its path
 * (`/0`, `/1`): a replay of the same items makes the same splits under the same tokens, so the parts
 * the first try stored are deduplicated. Any other error propagates, and the caller retries the whole.
 */
export async function storeIsolating<T>(
  items: readonly T[],
  token: string,
  attempt: (part: readonly T[], token: string) => Promise<void>,
): Promise<Refused<T>[]> {
  try {
    await attempt(items, token);
    return [];
  } catch (error) {
    if (!refusedForData(error)) throw error;
    if (items.length === 1) return [{ item: items[0]!, reason: refusalReason(error) }];
    const middle = Math.ceil(items.length / 2);
    const first = await storeIsolating(items.slice(0, middle), `${token}/0`, attempt);
    const second = await storeIsolating(items.slice(middle), `${token}/1`, attempt);
    return [...first, ...second];
  }
}
