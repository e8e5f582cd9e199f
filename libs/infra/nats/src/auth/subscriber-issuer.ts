import { readFileSync } from 'node:fs';
import { Streams, Subjects } from '@berth/contracts';
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { z } from 'zod';
import { connectNats } from '../connection/connect';
import { applyOwnerStream } from '../topology/apply-topology';
import { ownerEventStream } from '../topology/topology';
import { BERTH_API_PREFIX, issueUser, subscribersAccountJwt, type IssuedUser, type Revocations } from './accounts';
import type { NatsIssuerMaterial } from './auth-setup';
import { ownerSubscriberPermissions } from './permissions';

const IssuerSchema = z.object({
  operator_signing_seed: z.string().regex(/^SO[A-Z2-7]+$/),
  berth_account: z.string().regex(/^A[A-Z2-7]+$/),
  subscribers_account: z.string().regex(/^A[A-Z2-7]+$/),
  subscribers_signing_seed: z.string().regex(/^SA[A-Z2-7]+$/),
  subscribers_admin_creds: z.string().min(1),
  account_pusher_creds: z.string().min(1),
});

/** Reads `issuer.json` (written by `nats-init`), naming the setting on any problem. */
export function readIssuerMaterial(path: string, setting = 'BERTH_NATS_ISSUER'): NatsIssuerMaterial {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new Error(`${setting}: cannot read ${path} as JSON: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  const parsed = IssuerSchema.safeParse(raw);
  if (!parsed.success) throw new Error(`${setting}: ${path} is not Berth's NATS issuer file (${parsed.error.issues[0].path.join('.')}: ${parsed.error.issues[0].message})`);
  return parsed.data;
}

/** How an outside subscriber connects with a credential (also in the mint response). */
export type SubscriberConnection = Readonly<{ inbox_prefix: string; stream: string; subjects: string }>;

export const subscriberConnection = (ownerId: string): SubscriberConnection => ({
  inbox_prefix: Subjects.ownerInbox(ownerId),
  stream: Streams.ownerEvents(ownerId),
  subjects: Subjects.ownerEvents(ownerId),
});

/**
 * Mints and revokes outside subscribers' credentials: a fresh user of the subscribers' account per
 * credential, limited to its owner's stream (created here on first use); revocation re-signs that
 * account with the revoked keys listed and pushes it to the server's resolver, which refuses those
 * users from then on and disconnects the ones connected.
 */
export class SubscriberIssuer {
  private constructor(
    /** The NATS URL(s) subscribers connect to (handed back with each credential). */
    readonly servers: string,
    private readonly material: NatsIssuerMaterial,
    private readonly admin: NatsConnection,
    private readonly pusher: NatsConnection,
    private readonly streamReplicas: number,
  ) {}

  /**
   * `publicUrl`: where subscribers reach the server, when it differs from the platform's own `url`;
   * `streamReplicas`: copies of each owner's stream (`BERTH_NATS_STREAM_REPLICAS`, as Berth's own).
   */
  static async connect(url: string, material: NatsIssuerMaterial, publicUrl = url, streamReplicas = 1): Promise<SubscriberIssuer> {
    const admin = await connectNats({ url, name: 'subscribers-admin', creds: material.subscribers_admin_creds });
    try {
      const pusher = await connectNats({ url, name: 'account-pusher', creds: material.account_pusher_creds });
      return new SubscriberIssuer(publicUrl, material, admin, pusher, streamReplicas);
    } catch (e) {
      await admin.close();
      throw e;
    }
  }

  async ensureOwnerStream(ownerId: string): Promise<void> {
    await applyOwnerStream(await jetstreamManager(this.admin), ownerEventStream(ownerId, BERTH_API_PREFIX, this.streamReplicas));
  }

  /** Creates the owner's stream if needed, then signs a user that may read only it. */
  async issue(ownerId: string, name: string): Promise<IssuedUser> {
    await this.ensureOwnerStream(ownerId);
    return issueUser({
      name,
      account: this.material.subscribers_account,
      signingSeed: this.material.subscribers_signing_seed,
      permissions: ownerSubscriberPermissions(ownerId),
      tags: [`owner:${ownerId.toLowerCase()}`],
    });
  }

  /** Resolves once the server stored the account with exactly these revocations. */
  async publishRevocations(revocations: Revocations): Promise<void> {
    const jwt = await subscribersAccountJwt(
      {
        operatorSigningSeed: this.material.operator_signing_seed,
        account: this.material.subscribers_account,
        berthAccount: this.material.berth_account,
        signingSeed: this.material.subscribers_signing_seed,
      },
      revocations,
    );
    const reply = await this.pusher.request(`$SYS.REQ.ACCOUNT.${this.material.subscribers_account}.CLAIMS.UPDATE`, jwt, { timeout: 5_000 });
    const body = reply.json<{ data?: { code?: number }; error?: { code?: number; description?: string } }>();
    if (body.error || body.data?.code !== 200) {
      throw new Error(`the NATS resolver refused the subscribers' account update: ${body.error?.description ?? JSON.stringify(body)}`);
    }
  }

  async close(): Promise<void> {
    await Promise.allSettled([this.admin.close(), this.pusher.close()]);
  }
}
