import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { BerthError } from '@berth/core';
import type { SealedSecret } from '@berth/contracts';
import type { SecretBox } from '@berth/ports';

/** The server's encryption keys by id; `active` seals, every key opens. */
export type SecretKeyRing = Readonly<{ active: string; keys: ReadonlyMap<string, Buffer> }>;

const KEY_ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Parses `BERTH_SECRET_KEYS`: comma-separated `<key id>:<base64 of 32 bytes>`, the first one active.
 * To rotate, put the new key first and keep the old ones after it: new secrets and every secret
 * replaced (a regenerated signing secret, a credential given a new secret) are sealed under the new
 * key, and old ones still open. Errors name the entry, never the key material.
 */
export function parseSecretKeys(text: string): SecretKeyRing {
  const keys = new Map<string, Buffer>();
  const entries = text.split(',').map((e) => e.trim()).filter(Boolean);
  if (entries.length === 0) throw new Error('BERTH_SECRET_KEYS holds no key (expected <key id>:<base64 of 32 bytes>[,…])');
  entries.forEach((entry, i) => {
    const colon = entry.indexOf(':');
    const id = colon > 0 ? entry.slice(0, colon) : '';
    if (!KEY_ID.test(id)) throw new Error(`BERTH_SECRET_KEYS entry ${i + 1}: expected <key id>:<base64 key>, the id being 1-64 letters, digits, _ or -`);
    const key = Buffer.from(entry.slice(colon + 1), 'base64');
    if (key.length !== 32) throw new Error(`BERTH_SECRET_KEYS key ${id}: must be 32 bytes in base64 (got ${key.length})`);
    if (keys.has(id)) throw new Error(`BERTH_SECRET_KEYS names key ${id} twice`);
    keys.set(id, key);
  });
  return { active: entries[0]?.slice(0, entries[0].indexOf(':')) ?? '', keys };
}

/** AES-256-GCM with a fresh 96-bit IV per seal, the record's identity as additional authenticated data. */
export class AesGcmSecretBox implements SecretBox {
  constructor(private readonly ring: SecretKeyRing) {}

  seal(plaintext: string, aad: string): SealedSecret {
    const key = this.ring.keys.get(this.ring.active) as Buffer;
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from(aad, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return { key_id: this.ring.active, iv: iv.toString('base64'), ciphertext: ciphertext.toString('base64'), tag: cipher.getAuthTag().toString('base64') };
  }

  open(sealed: SealedSecret, aad: string): string {
    const key = this.ring.keys.get(sealed.key_id);
    if (!key) throw new BerthError('SECRET_KEY_UNKNOWN', 500, `a secret is sealed under key ${sealed.key_id}, which BERTH_SECRET_KEYS does not hold`);
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(sealed.iv, 'base64'));
      decipher.setAAD(Buffer.from(aad, 'utf8'));
      decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
      return Buffer.concat([decipher.update(Buffer.from(sealed.ciphertext, 'base64')), decipher.final()]).toString('utf8');
    } catch {
      throw new BerthError('SECRET_UNREADABLE', 500, `a secret sealed under key ${sealed.key_id} does not open: tampered with, or moved to another record`);
    }
  }
}

/** Stands in when no key is configured: every use is a 503 that names the setting. */
export class UnconfiguredSecretBox implements SecretBox {
  seal(): SealedSecret {
    throw notConfigured();
  }

  open(): string {
    throw notConfigured();
  }
}

const notConfigured = () =>
  new BerthError('SECRETS_NOT_CONFIGURED', 503, 'storing secrets needs a server key: set BERTH_SECRET_KEYS (or BERTH_SECRET_KEYS_FILE) on the gateway, the sandbox-manager, the webhook service and the egress');
