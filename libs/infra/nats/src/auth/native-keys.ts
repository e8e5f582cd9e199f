import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import type { KeyPair } from '@nats-io/nkeys';

/**
 * nkeys' Ed25519 is pure JavaScript and re-derives the key on every call (tens of milliseconds a
 * signature on a quiet machine, hundreds under load); this is the same key pair with the curve
 * work done by node:crypto. The encodings follow nkeys: base32 of prefix byte(s), payload and a
 * CRC-16/XMODEM (little-endian); a seed's two prefix bytes carry the seed marker and the role.
 */

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
const SEED_MARKER = 18 << 3;
const PRIVATE = 15 << 3;
const PKCS8_ED25519 = Buffer.from('302e020100300506032b657004220420', 'hex');

function base32(bytes: Uint8Array): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += ALPHABET[(value << (5 - bits)) & 31];
  return out;
}

function unbase32(text: string): Uint8Array {
  const out: number[] = [];
  let bits = 0;
  let value = 0;
  for (const char of text) {
    const digit = ALPHABET.indexOf(char);
    if (digit < 0) throw new Error('not an nkey: invalid base32');
    value = (value << 5) | digit;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 255);
      bits -= 8;
    }
  }
  return Uint8Array.from(out);
}

function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

const withCrc = (bytes: Uint8Array): Uint8Array => {
  const crc = crc16(bytes);
  return Uint8Array.from([...bytes, crc & 255, crc >> 8]);
};

const encodeKey = (prefix: readonly number[], payload: Uint8Array): string => base32(withCrc(Uint8Array.from([...prefix, ...payload])));

/** The role prefix byte (`O`, `A`, `U`, …) and the 32-byte Ed25519 seed of an nkeys seed (`S…`). */
function decodeSeed(seed: string): { role: number; raw: Uint8Array } {
  const bytes = unbase32(seed);
  const body = bytes.subarray(0, bytes.length - 2);
  if (bytes.length !== 36 || crc16(body) !== (bytes[34] | (bytes[35] << 8))) throw new Error('not an nkey seed');
  if ((bytes[0] & 0xf8) !== SEED_MARKER) throw new Error('not an nkey seed');
  return { role: ((bytes[0] & 7) << 5) | ((bytes[1] & 0xf8) >> 3), raw: bytes.subarray(2, 34) };
}

export function nativeKeyPair(seed: string): KeyPair {
  const { role, raw } = decodeSeed(seed);
  const privateKey: KeyObject = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519, raw]), format: 'der', type: 'pkcs8' });
  const publicKey = createPublicKey(privateKey);
  const rawPublic = Buffer.from(publicKey.export({ format: 'jwk' }).x as string, 'base64url');
  const encodedPublic = encodeKey([role], rawPublic);
  const encodedPrivate = new TextEncoder().encode(encodeKey([PRIVATE], Uint8Array.from([...raw, ...rawPublic])));
  const unsupported = (): never => {
    throw new Error('sealing is not supported by this key pair');
  };
  return {
    getPublicKey: () => encodedPublic,
    getPrivateKey: () => encodedPrivate,
    getSeed: () => new TextEncoder().encode(seed),
    sign: (input) => new Uint8Array(sign(null, input, privateKey)),
    verify: (input, signature) => verify(null, input, publicKey, signature),
    clear: () => undefined,
    seal: unsupported,
    open: unsupported,
  };
}
