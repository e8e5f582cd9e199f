import { createAccount, createOperator, createUser, fromPublic, fromSeed } from '@nats-io/nkeys';
import { nativeKeyPair } from './native-keys';

describe('nativeKeyPair (node:crypto Ed25519 in nkeys encodings)', () => {
  it.each([
    ['operator', createOperator],
    ['account', createAccount],
    ['user', createUser],
  ])('derives the same %s public and private keys as nkeys, and signatures nkeys verifies', (_role, create) => {
    const reference = create();
    const seed = new TextDecoder().decode(reference.getSeed());
    const native = nativeKeyPair(seed);
    expect(native.getPublicKey()).toBe(reference.getPublicKey());
    expect(native.getPrivateKey()).toEqual(reference.getPrivateKey());
    const data = new TextEncoder().encode('header.claims');
    const signature = native.sign(data);
    expect(signature).toEqual(reference.sign(data));
    expect(fromPublic(reference.getPublicKey()).verify(data, signature)).toBe(true);
    expect(native.verify(data, fromSeed(reference.getSeed()).sign(data))).toBe(true);
  });

  it('refuses what is not a seed', () => {
    const seed = new TextDecoder().decode(createUser().getSeed());
    expect(() => nativeKeyPair(createUser().getPublicKey())).toThrow(/not an nkey seed/);
    // A changed character inside the payload (the last one also carries padding bits, which decode away): the CRC catches it.
    expect(() => nativeKeyPair(`${seed.slice(0, 10)}${seed[10] === 'A' ? 'B' : 'A'}${seed.slice(11)}`)).toThrow(/not an nkey seed/);
    expect(() => nativeKeyPair('S!')).toThrow(/not an nkey/);
  });
});
