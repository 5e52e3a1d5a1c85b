import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One request a receiver got, and whether its signature verified with the endpoint's secret(s). */
export interface Received {
  readonly path: string;
  readonly id: string;
  readonly timestamp: string;
  readonly signature: string;
  readonly body: string;
  readonly headers: http.IncomingHttpHeaders;
  /** Every secret given for the path verified the request (the standardwebhooks package, not our code). */
  readonly verified: boolean;
  /** The status the receiver answered it with. */
  readonly answered: number;
  /** When it arrived (epoch ms). */
  readonly at: number;
}

/** What one path answers: a status (503 while "down"), after an optional delay, or a redirect. */
export interface Behaviour {
  status?: number;
  delayMs?: number;
  location?: string;
}

/**
 * A real HTTP receiver on loopback: each path is an endpoint, answers as its behaviour says, and checks
 * every request's Standard Webhooks signature with the `standardwebhooks` npm package (an implementation
 * independent of callmeter's node:crypto signing) against the secrets the test registered for it.
 */
export class WebhookReceiver {
  readonly received: Received[] = [];
  private readonly behaviours = new Map<string, Behaviour>();
  private readonly secrets = new Map<string, string[]>();
  private server: http.Server | null = null;
  port = 0;

  async listen(port = 0): Promise<this> {
    const server = http.createServer((req, res) => this.handle(req, res));
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
    return this;
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = null;
    server?.closeAllConnections();
    if (server !== null) await new Promise((resolve) => server.close(resolve));
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  behave(path: string, behaviour: Behaviour): void {
    this.behaviours.set(path, behaviour);
  }

  /** The secrets every request to `path` must verify with (each one alone). */
  expectSecrets(path: string, secrets: string[]): void {
    this.secrets.set(path, secrets);
  }

  at(path: string): Received[] {
    return this.received.filter((request) => request.path === path);
  }

  /** The requests to `path` answered with a 2xx: what a receiver would have processed. */
  accepted(path: string): Received[] {
    return this.at(path).filter((request) => request.answered >= 200 && request.answered < 300);
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const path = req.url ?? '/';
      const header = (name: string) => String(req.headers[name] ?? '');
      const headers = {
        'webhook-id': header('webhook-id'),
        'webhook-timestamp': header('webhook-timestamp'),
        'webhook-signature': header('webhook-signature'),
      };
      const secrets = this.secrets.get(path) ?? [];
      const verified =
        secrets.length > 0 &&
        secrets.every((secret) => {
          try {
            new Webhook(secret).verify(body, headers);
            return true;
          } catch {
            return false;
          }
        });
      const { status = 200, delayMs = 0, location } = this.behaviours.get(path) ?? {};
      this.received.push({
        path,
        id: headers['webhook-id'],
        timestamp: headers['webhook-timestamp'],
        signature: headers['webhook-signature'],
        body,
        headers: req.headers,
        verified,
        answered: location === undefined ? status : 302,
        at: Date.now(),
      });
      setTimeout(() => {
        if (res.destroyed) return;
        res.writeHead(location === undefined ? status : 302, location === undefined ? {} : { location });
        res.end('ok');
      }, delayMs);
    });
  }
}
