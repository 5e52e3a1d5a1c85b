import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { messageIdOf } from './message-id.ts';
import { newWebhookSecret, signatureHeader } from './signature.ts';

describe('Standard Webhooks signatures', () => {
  const body = '{"type":"budget.exhausted","timestamp":"2026-11-27T00:00:00.000Z","data":{"spent":"25.0000001"}}';
  const id = 'msg_test';

  it('verify with the standardwebhooks package (an implementation of their own)', () => {
    const secret = newWebhookSecret();
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = {
      'webhook-id': id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signatureHeader([secret], id, timestamp, body),
    };
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(newWebhookSecret()).verify(body, headers)).toThrow();
    expect(() => new Webhook(secret).verify(body.replace('25', '26'), headers)).toThrow();
  });

  it('are the HMAC-SHA256 of id.timestamp.body keyed with the decoded secret, one per secret during a rotation', () => {
    const secrets = [newWebhookSecret(), newWebhookSecret()];
    const header = signatureHeader(secrets, id, 1_700_000_000, body);
    const expected = secrets.map((secret) => {
      const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
      return `v1,${createHmac('sha256', key).update(`${id}.1700000000.${body}`).digest('base64')}`;
    });
    expect(header).toBe(expected.join(' '));
  });

  it('use secrets of 32 random bytes', () => {
    const secret = newWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    expect(newWebhookSecret()).not.toBe(secret);
  });
});

describe('the webhook-id', () => {
  it('is the same for the same event, and differs by key, type and tenant', () => {
    const id = messageIdOf('budget.exhausted', 'tenant-a', 'budget-1:2026-11:100%');
    expect(id).toMatch(/^msg_[A-Za-z0-9_-]{32}$/);
    expect(messageIdOf('budget.exhausted', 'tenant-a', 'budget-1:2026-11:100%')).toBe(id);
    expect(messageIdOf('budget.exhausted', 'tenant-a', 'budget-1:2026-12:100%')).not.toBe(id);
    expect(messageIdOf('budget.resolved', 'tenant-a', 'budget-1:2026-11:100%')).not.toBe(id);
    expect(messageIdOf('budget.exhausted', 'tenant-b', 'budget-1:2026-11:100%')).not.toBe(id);
  });
});
