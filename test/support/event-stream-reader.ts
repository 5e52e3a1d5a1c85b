import { testAuthHeaders } from './test-auth.ts';

export interface StreamMessage {
  readonly id: string | null;
  readonly event: string;
  readonly data: unknown;
  /** performance.now() when it arrived. */
  readonly receivedAt: number;
}

/**
 * Reads a text/event-stream answer as it arrives (fetch's body stream, as a browser's fetch-based
 * reader does): messages, and comment lines (heartbeats) counted apart.
 */
export class EventStreamReader {
  readonly messages: StreamMessage[] = [];
  comments = 0;
  ended = false;
  private readonly abort = new AbortController();
  private waiters: (() => void)[] = [];

  private constructor(readonly response: Response) {}

  static async open(url: string, headers: Record<string, string> = {}): Promise<EventStreamReader> {
    const abort = new AbortController();
    const response = await fetch(url, { headers: { ...testAuthHeaders(), ...headers }, signal: abort.signal });
    const reader = new EventStreamReader(response);
    reader.abort.signal.addEventListener('abort', () => abort.abort());
    if (response.ok && response.body) void reader.pump(response.body);
    return reader;
  }

  /** Resolves with the n-th message (1-based) once it has arrived, or rejects after timeoutMs. */
  async message(n: number, timeoutMs = 15_000): Promise<StreamMessage> {
    await this.until(() => this.messages.length >= n || this.ended, timeoutMs, `message ${n}`);
    const message = this.messages[n - 1];
    if (message === undefined) throw new Error(`the stream ended after ${this.messages.length} messages`);
    return message;
  }

  async until(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!condition()) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no ${what} within ${timeoutMs} ms (${this.messages.length} messages)`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  close(): void {
    this.abort.abort();
  }

  private async pump(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of body) {
        buffer += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          this.take(buffer.slice(0, end));
          buffer = buffer.slice(end + 2);
        }
        this.notify();
      }
    } catch {
      // aborted by close()
    }
    this.ended = true;
    this.notify();
  }

  private take(block: string): void {
    let id: string | null = null;
    let event = 'message';
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) this.comments += 1;
      else if (line.startsWith('id: ')) id = line.slice(4);
      else if (line.startsWith('event: ')) event = line.slice(7);
      else if (line.startsWith('data: ')) data.push(line.slice(6));
    }
    if (data.length > 0)
      this.messages.push({ id, event, data: JSON.parse(data.join('\n')), receivedAt: performance.now() });
  }

  private notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) waiter();
  }
}
