/** Unix seconds by user public key: credentials issued at or before then are refused. */
export type RevocationList = Readonly<Record<string, number>>;

/** What the gateway needs to mint and revoke outside subscribers' NATS credentials. */
export interface SubscriberIssuer {
  /** The NATS URL(s) subscribers connect to, as handed back with a credential. */
  readonly servers: string;
  /** A fresh user limited to the owner's events (its stream is created on first use). */
  issue(ownerId: string, name: string): Promise<Readonly<{ publicKey: string; creds: string }>>;
  /** Makes the server refuse (and disconnect) exactly these users. */
  publishRevocations(revocations: RevocationList): Promise<void>;
}
