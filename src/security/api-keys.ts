import { createHash, randomBytes } from 'node:crypto';

const PREFIX = 'atr_';

/** 256 random bits, URL-safe; the `atr_` prefix makes leaked keys easy to scan for. */
export function generateApiKey(): string {
  return PREFIX + randomBytes(32).toString('base64url');
}

/** Keys are high-entropy, so one fast hash is enough (no salt or KDF needed to resist guessing). */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

export function keyPrefix(key: string): string {
  return key.slice(0, PREFIX.length + 6);
}
