import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { bareHost, checkedLookup, refusedRange, type Resolve } from './address-policy.ts';
import { signatureHeader } from './signature.ts';

export const USER_AGENT = 'callmeter-webhooks/1';

export interface WebhookRequest {
  readonly url: string;
  readonly messageId: string;
  readonly body: string;
  /** The secrets that sign it now: the current one, and during a rotation the previous one. */
  readonly secrets: readonly string[];
  readonly timeoutMs: number;
  /** WEBHOOK_ALLOW_PRIVATE=1: any address (development and tests only). */
  readonly allowPrivate: boolean;
  readonly resolve?: Resolve;
  readonly now?: () => number;
}

export interface AttemptOutcome {
  /** The receiver's status; null when it never answered. */
  readonly status_code: number | null;
  readonly latency_ms: number;
  readonly error: string | null;
  /** A 2xx: delivered. A redirect is never followed and counts as a failure. */
  readonly ok: boolean;
}

/**
 * One attempt: a POST of the body with the three Standard Webhooks headers, content-type and user-agent,
 * and nothing else (no credential, no cookie). The socket connects to the address the checked lookup
 * resolved and vetted; a connection of its own each time (no pooled socket outlives the check). The whole
 * exchange, answer included, must end within `timeoutMs`.
 */
export function sendWebhook(request: WebhookRequest): Promise<AttemptOutcome> {
  const now = request.now ?? Date.now;
  const started = now();
  const done = (status_code: number | null, error: string | null): AttemptOutcome => ({
    status_code,
    latency_ms: Math.max(0, now() - started),
    error,
    ok: error === null && status_code !== null && status_code >= 200 && status_code < 300,
  });
  const url = new URL(request.url);
  const host = bareHost(url);
  if (!request.allowPrivate && isIP(host) !== 0 && refusedRange(host) !== null)
    return Promise.resolve(done(null, `${host} is a ${refusedRange(host)} address: refused`));
  const timestampS = Math.floor(started / 1000);
  const headers = {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'webhook-id': request.messageId,
    'webhook-timestamp': String(timestampS),
    'webhook-signature': signatureHeader(request.secrets, request.messageId, timestampS, request.body),
  };
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (outcome: AttemptOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const req = client.request(
      url,
      {
        method: 'POST',
        headers,
        agent: false,
        ...(request.allowPrivate ? {} : { lookup: checkedLookup(request.resolve) }),
      },
      (res) => {
        const status = res.statusCode ?? null;
        // The answer's body is read and dropped: the attempt ends when the receiver has answered whole.
        res.on('data', () => undefined);
        res.on('end', () =>
          finish(done(status, status !== null && status >= 200 && status < 300 ? null : `answered ${status}`)),
        );
        res.on('error', (error) => finish(done(status, error.message)));
      },
    );
    const timer = setTimeout(() => {
      finish(done(null, `no answer within ${request.timeoutMs} ms`));
      req.destroy();
    }, request.timeoutMs);
    req.on('error', (error) => finish(done(null, error.message)));
    req.end(request.body);
  });
}
