import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** Every key begins so: readable in a config file or a leaked-secret scanner's rule. */
export const KEY_PREFIX = 'cm_live_';
/** 32 random bytes: 256 bits, far past the 128 a key needs. */
const SECRET_BYTES = 32;
/** The characters after KEY_PREFIX that are stored in clear, to find the key and show it in listings (48 bits). */
const LOOKUP_CHARS = 8;

export interface NewSecret {
  readonly key: string;
  readonly prefix: string;
  readonly salt: string;
  readonly secretHash: string;
}

export function newSecret(): NewSecret {
  const key = `${KEY_PREFIX}${randomBytes(SECRET_BYTES).toString('base64url')}`;
  const salt = randomBytes(16).toString('hex');
  return { key, prefix: prefixOf(key), salt, secretHash: hashSecret(salt, key) };
}

export function prefixOf(key: string): string {
  return key.slice(0, KEY_PREFIX.length + LOOKUP_CHARS);
}

export function looksLikeKey(credential: string): boolean {
  return credential.startsWith(KEY_PREFIX) && credential.length > KEY_PREFIX.length + LOOKUP_CHARS;
}

/**
 * A salted SHA-256: the secret is 256 random bits, so a slow password hash (scrypt, argon2) would
 * add nothing against guessing and cost every request milliseconds; the salt keeps equal hashes apart.
 */
export function hashSecret(salt: string, key: string): string {
  return createHash('sha256').update(salt).update(':').update(key).digest('hex');
}

/** Compares in constant time, whatever the key sent. */
export function secretMatches(salt: string, secretHash: string, key: string): boolean {
  const expected = Buffer.from(secretHash, 'hex');
  const actual = Buffer.from(hashSecret(salt, key), 'hex');
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

/** Constant-time equality of two secrets of any length (ADMIN_API_KEY, METRICS_TOKEN): their hashes are compared. */
export function sameSecret(expected: string, actual: string): boolean {
  const a = createHash('sha256').update(expected).digest();
  const b = createHash('sha256').update(actual).digest();
  return timingSafeEqual(a, b);
}
