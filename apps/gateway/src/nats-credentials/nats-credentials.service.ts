import { Streams, Subjects } from '@berth/contracts';
import { BerthError, ErrorCodes, NotFoundError, type Clock, type IdGenerator } from '@berth/core';
import type { NatsCredentialRecord, NatsCredentials } from '@berth/ports';
import type { RevocationList, SubscriberIssuer } from './subscriber-issuer.port';

const render = (c: NatsCredentialRecord) => ({
  type: 'nats_credential' as const,
  id: c.id,
  name: c.name,
  public_key: c.public_key,
  created_at: c.created_at,
  revoked_at: c.revoked_at,
});

/** The revocation list from the store's records: JWTs issued up to the revocation second are refused. */
export const revocationsOf = (revoked: readonly NatsCredentialRecord[]): RevocationList =>
  Object.fromEntries(revoked.map((c) => [c.public_key, Math.ceil(Date.parse(c.revoked_at as string) / 1000)]));

/**
 * Outside subscribers' NATS credentials (docs/events.md): one per call, limited to the caller's own
 * session events, stored as a public key only; revoking pushes the full revocation list (the store
 * is its source of truth) so the NATS server refuses the credential from then on.
 */
export class NatsCredentialsService {
  constructor(
    private readonly store: NatsCredentials,
    private readonly issuer: SubscriberIssuer | null,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
  ) {}

  async create(owner: string, name: string) {
    const issuer = this.configured();
    const issued = await issuer.issue(owner, name);
    const record: NatsCredentialRecord = { id: this.ids.next('ncred'), owner_id: owner, name, public_key: issued.publicKey, created_at: this.clock.now().toISOString(), revoked_at: null };
    await this.store.insert(record);
    return {
      ...render(record),
      creds: issued.creds,
      connection: { servers: issuer.servers, inbox_prefix: Subjects.ownerInbox(owner), stream: Streams.ownerEvents(owner), subjects: Subjects.ownerEvents(owner) },
    };
  }

  async list(owner: string) {
    return { data: (await this.store.list(owner)).map(render) };
  }

  async revoke(owner: string, id: string) {
    // Another owner's id is a 404 whatever this server's configuration.
    if (!(await this.store.list(owner)).some((c) => c.id === id)) throw new NotFoundError(`nats credential ${id} not found`);
    const issuer = this.configured();
    const record = await this.store.revoke(owner, id, this.clock.now().toISOString());
    if (!record) throw new NotFoundError(`nats credential ${id} not found`);
    await issuer.publishRevocations(revocationsOf(await this.store.revoked()));
    return render(record);
  }

  /** Brings the server's revocation list in line with the store (at start, after an outage). */
  async syncRevocations(): Promise<void> {
    await this.configured().publishRevocations(revocationsOf(await this.store.revoked()));
  }

  private configured(): SubscriberIssuer {
    if (this.issuer) return this.issuer;
    throw new BerthError(ErrorCodes.UNAVAILABLE, 503, 'NATS credentials are not enabled on this server (the gateway has no BERTH_NATS_ISSUER)');
  }
}
