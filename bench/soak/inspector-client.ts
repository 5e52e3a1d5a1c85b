import { once } from 'node:events';
import { createWriteStream } from 'node:fs';

/** What process.memoryUsage() says, in bytes. */
export interface MemoryUsage {
  readonly rss: number;
  readonly heapUsed: number;
  readonly heapTotal: number;
  readonly external: number;
  readonly arrayBuffers: number;
}

interface Reply {
  readonly id?: number;
  readonly method?: string;
  readonly params?: { chunk?: string };
  readonly result?: unknown;
  readonly error?: { message: string };
}

/**
 * A Chrome DevTools Protocol session with a callmeter process started with
 * `--inspect=127.0.0.1:<port>`: the process runs unchanged (no domain that slows it, such as the
 * debugger's, is enabled), and the soak asks it from outside for its memory figures, a full
 * collection, and a heap snapshot, streamed to a file chunk by chunk.
 * Node's built-in WebSocket client (`--experimental-websocket` on Node 20, standard from Node 22).
 */
export class InspectorClient {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  private chunkSink: ((chunk: string) => void) | null = null;

  private constructor(private readonly socket: WebSocket) {
    socket.addEventListener('message', (event) => this.receive(JSON.parse(String(event.data)) as Reply));
    socket.addEventListener('close', () => {
      for (const waiter of this.pending.values()) waiter.reject(new Error('the inspector closed the connection'));
      this.pending.clear();
    });
  }

  static async connect(port: number): Promise<InspectorClient> {
    const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as {
      webSocketDebuggerUrl: string;
    }[];
    const socket = new WebSocket(targets[0]!.webSocketDebuggerUrl);
    await new Promise<void>((resolve, reject) => {
      socket.addEventListener('open', () => resolve(), { once: true });
      socket.addEventListener('error', () => reject(new Error(`no inspector session on port ${port}`)), {
        once: true,
      });
    });
    return new InspectorClient(socket);
  }

  /** process.memoryUsage() in the process. */
  async memoryUsage(): Promise<MemoryUsage> {
    const { result } = (await this.call('Runtime.evaluate', {
      expression: 'process.memoryUsage()',
      returnByValue: true,
    })) as { result: { value: MemoryUsage } };
    return result.value;
  }

  /** A full collection (HeapProfiler.collectGarbage), then process.memoryUsage(). */
  async memoryAfterGc(): Promise<MemoryUsage> {
    await this.call('HeapProfiler.collectGarbage');
    return this.memoryUsage();
  }

  /**
   * Writes a V8 heap snapshot of the process to `file` (V8 collects garbage before it takes one), then
   * disables the profiler, which drops the id it gave every object (kept, and updated at every
   * collection, while the profiler is enabled).
   */
  async writeHeapSnapshot(file: string): Promise<void> {
    const out = createWriteStream(file);
    this.chunkSink = (chunk) => out.write(chunk);
    try {
      await this.call('HeapProfiler.enable');
      await this.call('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
      await this.call('HeapProfiler.disable');
    } finally {
      this.chunkSink = null;
      out.end();
      await once(out, 'close');
    }
  }

  close(): void {
    this.socket.close();
  }

  private call(method: string, params: object = {}): Promise<unknown> {
    const id = this.nextId++;
    this.socket.send(JSON.stringify({ id, method, params }));
    return new Promise((resolve, reject) => this.pending.set(id, { resolve, reject }));
  }

  private receive(reply: Reply): void {
    if (reply.method === 'HeapProfiler.addHeapSnapshotChunk') {
      this.chunkSink?.(reply.params!.chunk!);
      return;
    }
    if (reply.id === undefined) return;
    const waiter = this.pending.get(reply.id);
    this.pending.delete(reply.id);
    if (reply.error) waiter?.reject(new Error(reply.error.message));
    else waiter?.resolve(reply.result);
  }
}
