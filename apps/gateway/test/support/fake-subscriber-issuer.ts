import { randomBytes } from 'node:crypto';
import type { RevocationList, SubscriberIssuer } from '../../src/nats-credentials/subscriber-issuer.port';

/** Mints fake credentials and records what was revoked: for wiring tests of the HTTP side (the real one is in @berth/nats). */
export class FakeSubscriberIssuer implements SubscriberIssuer {
  readonly servers = 'nats://127.0.0.1:4222';
  readonly issued: { ownerId: string; name: string; publicKey: string }[] = [];
  revocations: RevocationList = {};

  async issue(ownerId: string, name: string) {
    const publicKey = `U${randomBytes(27).toString('hex').toUpperCase().slice(0, 55)}`;
    this.issued.push({ ownerId, name, publicKey });
    return { publicKey, creds: `-----BEGIN NATS USER JWT-----\nfake.${publicKey}\n------END NATS USER JWT------\n` };
  }

  async publishRevocations(revocations: RevocationList): Promise<void> {
    this.revocations = revocations;
  }
}
