import { randomBytes } from 'node:crypto';
import { isBerthError } from '@berth/core';
import { AesGcmSecretBox, parseSecretKeys, UnconfiguredSecretBox } from './secret-box';

const key = () => randomBytes(32).toString('base64');

describe('AesGcmSecretBox', () => {
  const k1 = key();
  const k2 = key();

  it('seals under the active key and opens what it sealed, with nothing of the plaintext in the sealed form', () => {
    const box = new AesGcmSecretBox(parseSecretKeys(`k1:${k1}`));
    const sealed = box.seal('ghp_the-real-token', 'vcrd_1');
    expect(sealed.key_id).toBe('k1');
    expect(JSON.stringify(sealed)).not.toContain('ghp_the-real-token');
    expect(Buffer.from(sealed.iv, 'base64')).toHaveLength(12);
    expect(box.open(sealed, 'vcrd_1')).toBe('ghp_the-real-token');
  });

  it('never seals the same plaintext twice the same way (fresh IV)', () => {
    const box = new AesGcmSecretBox(parseSecretKeys(`k1:${k1}`));
    expect(box.seal('same', 'r').ciphertext === box.seal('same', 'r').ciphertext && box.seal('same', 'r').iv === box.seal('same', 'r').iv).toBe(false);
  });

  it('refuses a sealed value moved to another record, tampered with, or under a key it does not hold', () => {
    const box = new AesGcmSecretBox(parseSecretKeys(`k1:${k1}`));
    const sealed = box.seal('secret', 'vcrd_1');
    const codeOf = (f: () => unknown) => {
      try {
        f();
        return 'opened';
      } catch (e) {
        return isBerthError(e) ? e.code : String(e);
      }
    };
    expect(codeOf(() => box.open(sealed, 'vcrd_2'))).toBe('SECRET_UNREADABLE');
    const flipped = Buffer.from(sealed.ciphertext, 'base64');
    flipped[0] = (flipped[0] ?? 0) ^ 1;
    expect(codeOf(() => box.open({ ...sealed, ciphertext: flipped.toString('base64') }, 'vcrd_1'))).toBe('SECRET_UNREADABLE');
    expect(codeOf(() => box.open({ ...sealed, key_id: 'k9' }, 'vcrd_1'))).toBe('SECRET_KEY_UNKNOWN');
  });

  it('rotates: a new active key seals, the old key still opens, and a key dropped from the ring no longer opens what it sealed', () => {
    const before = new AesGcmSecretBox(parseSecretKeys(`k1:${k1}`));
    const old = before.seal('secret', 'r');
    const after = new AesGcmSecretBox(parseSecretKeys(`k2:${k2},k1:${k1}`));
    expect(after.open(old, 'r')).toBe('secret');
    const resealed = after.seal('secret', 'r');
    expect(resealed.key_id).toBe('k2');
    const dropped = new AesGcmSecretBox(parseSecretKeys(`k2:${k2}`));
    expect(dropped.open(resealed, 'r')).toBe('secret');
    expect(() => dropped.open(old, 'r')).toThrow(/key k1/);
  });
});

describe('parseSecretKeys', () => {
  it.each([
    ['', 'holds no key'],
    ['nokey', 'expected <key id>:<base64 key>'],
    [`k1:${randomBytes(16).toString('base64')}`, 'must be 32 bytes'],
    [`k1:${key()},k1:${key()}`, 'twice'],
    [`bad id:${key()}`, 'expected <key id>'],
  ])('refuses %j naming the problem', (text, message) => {
    expect(() => parseSecretKeys(text)).toThrow(message);
  });

  it('never puts key material in an error', () => {
    const short = randomBytes(16).toString('base64');
    expect(() => parseSecretKeys(`k1:${short}`)).toThrow(expect.objectContaining({ message: expect.not.stringContaining(short) }));
  });
});

describe('UnconfiguredSecretBox', () => {
  it('answers 503 SECRETS_NOT_CONFIGURED naming the setting', () => {
    expect(() => new UnconfiguredSecretBox().seal()).toThrow(expect.objectContaining({ code: 'SECRETS_NOT_CONFIGURED', status: 503, message: expect.stringContaining('BERTH_SECRET_KEYS') }));
  });
});
