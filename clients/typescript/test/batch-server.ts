import http from 'node:http';
import type { AddressInfo } from 'node:net';

type Step = { status: number; headers?: Record<string, string>; body: unknown } | 'hang';

/** A small real HTTP server standing in for callmeter's batch route, scripted per test. */
export class BatchServer {
  readonly batches: Record<string, unknown>[][] = [];
  readonly stored = new Map<string, Record<string, unknown>>();
  readonly script: Step[] = [];
  reject: (body: Record<string, unknown>) => boolean = () => false;
  /** Per item: undefined for the usual answer, else the answer's status and errors. */
  itemAnswer: (body: Record<string, unknown>) => { status: string; errors: unknown } | undefined = () => undefined;
  /** A whole batch answered 413, as a body over the server's limit is. */
  tooLarge: (bodies: Record<string, unknown>[]) => boolean = () => false;
  /** Bearer keys answered 401, as a revoked or mistyped key is. */
  readonly refusedKeys = new Set<string>();
  readonly authorizations: (string | undefined)[] = [];
  hangMs = 1500;
  /** GET /api/sessions/{id}/budget: the paths read, and the answers in turn ('hang': allowed, after hangMs); the last stays. */
  readonly budgetReads: string[] = [];
  readonly budgetAnswers: Step[] = [];
  private readonly server = http.createServer((request, response) => void this.handle(request, response));

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const answer = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
      response.writeHead(status, { 'content-type': 'application/json', ...headers });
      response.end(JSON.stringify(payload));
    };
    if (request.method === 'GET') return this.budget(request.url ?? '', answer);
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown>[];
    if (request.url === '/api/sessions/') return answer(201, { id: 'session-1', ...body });
    this.batches.push(body);
    this.authorizations.push(request.headers.authorization);
    if (this.refusedKeys.has((request.headers.authorization ?? '').replace(/^Bearer /, '')))
      return answer(401, { detail: 'Invalid API key' });
    if (this.tooLarge(body)) return answer(413, { detail: 'Request body too large' });
    const step = this.script.shift();
    if (step !== undefined && step !== 'hang') return answer(step.status, step.body, step.headers);
    const answers = body.map((item, index) => {
      const id = item.event_id as string;
      const special = this.itemAnswer(item);
      if (special) return { index, id: null, ...special };
      if (this.reject(item)) return { index, id: null, status: 'rejected', errors: [{ msg: 'no' }] };
      if (this.stored.has(id)) return { index, id, status: 'duplicate' };
      this.stored.set(id, item);
      return { index, id, status: 'accepted' };
    });
    if (step === 'hang') await new Promise((resolve) => setTimeout(resolve, this.hangMs));
    if (!response.destroyed) answer(200, answers);
  }

  private async budget(url: string, answer: (status: number, payload: unknown) => void): Promise<void> {
    this.budgetReads.push(url);
    const step = this.budgetAnswers.length > 1 ? this.budgetAnswers.shift() : this.budgetAnswers[0];
    if (step === undefined) return answer(404, { detail: 'Not Found' });
    if (step !== 'hang') return answer(step.status, step.body);
    await new Promise((resolve) => setTimeout(resolve, this.hangMs));
    answer(200, standing(url.split('/')[3]!, true));
  }
}

/** An answer of GET /api/sessions/{id}/budget. */
export const standing = (sessionId: string, allowed: boolean, spent = '0.0123') => ({
  session_id: sessionId,
  allowed,
  spent,
  cap: '0.05',
  remaining: allowed ? '0.0377' : '0',
  budget_id: '00000000-0000-4000-8000-0000000000b1',
});

export const usage = (i: number, userId = 'user-1') => ({
  sessionId: 'session-1',
  userId,
  provider: 'deepgram',
  eventType: 'stt_minutes',
  quantities: { quantity: i + 1 },
});
