import { createHmac, randomBytes } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';

/** A new endpoint secret: `whsec_` and the base64 of 32 random bytes, as Standard Webhooks writes them. */
export function newWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

/**
 * The `webhook-signature` header (Standard Webhooks): `v1,<base64 HMAC-SHA256 of id.timestamp.body>`,
 * keyed with the base64-decoded part of each secret after `whsec_`, one per secret, space-separated
 * (during a rotation the current and the previous secret both sign).
 */
export function signatureHeader(secrets: readonly string[], id: string, timestampS: number, body: string): string {
  const content = `${id}.${timestampS}.${body}`;
  return secrets
    .map((secret) => {
      const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
      return `v1,${createHmac('sha256', key).update(content).digest('base64')}`;
    })
    .join(' ');
}
