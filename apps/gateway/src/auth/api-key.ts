import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { ApiKeyRecord } from '@berth/ports';

/**
 * API keys look like `bk_<prefix>_<secret>`. The prefix is public and indexes the stored record;
 * only sha256(secret) is stored, compared in constant time.
 */
const KEY_PATTERN = /^bk_([a-z0-9]{12})_([A-Za-z0-9]{32})$/;
const ALPHABET_LOWER = 'abcdefghijklmnopqrstuvwxyz0123456789';
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

const draw = (alphabet: string, length: number): string => {
  // 256 is not a multiple of the alphabet size; reject the tail bytes so every character is equally likely.
  const limit = 256 - (256 % alphabet.length);
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < limit && out.length < length) out += alphabet[byte % alphabet.length];
    }
  }
  return out;
};

export const hashSecret = (secret: string): string => createHash('sha256').update(secret, 'utf8').digest('hex');

export type ParsedKey = Readonly<{ prefix: string; secret: string }>;

export function parseApiKey(key: string): ParsedKey | null {
  const match = KEY_PATTERN.exec(key);
  return match ? { prefix: `bk_${match[1]}`, secret: match[2] } : null;
}

export type IssuedKey = Readonly<{ key: string; record: ApiKeyRecord }>;

export function issueApiKey(input: { ownerId: string; name: string; id: string; now: Date }): IssuedKey {
  const prefix = `bk_${draw(ALPHABET_LOWER, 12)}`;
  const secret = draw(ALPHABET, 32);
  return {
    key: `${prefix}_${secret}`,
    record: { id: input.id, owner_id: input.ownerId, prefix, hash: hashSecret(secret), name: input.name, created_at: input.now.toISOString(), revoked_at: null },
  };
}

/** True when the secret hashes to the stored hash (constant-time compare). */
export function secretMatches(secret: string, storedHash: string): boolean {
  const actual = Buffer.from(hashSecret(secret), 'hex');
  const expected = Buffer.from(storedHash, 'hex');
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
