import { Streams, Subjects } from '@berth/contracts';
import { encodeAccount, encodeOperator, encodeUser, fmtCreds, type Account, type Export, type Import } from '@nats-io/jwt';
import { createAccount, createOperator, createUser, type KeyPair } from '@nats-io/nkeys';
import { nativeKeyPair } from './native-keys';
import type { NatsPermissions } from './permissions';

/**
 * Decentralized NATS auth (operator → account → user JWTs signed with nkeys; docs/messaging.md):
 * - `BERTH`: the services' account, holding the topology's streams;
 * - `SUBSCRIBERS`: the outside subscribers' account, one stream per owner sourced from SESSION_EVT
 *   through the exports below, and one user per minted credential;
 * - `SYS`: the system account, through which the gateway pushes account JWTs (revocations).
 * The server learns accounts from its resolver; users are never configured on the server, so a
 * credential is minted by signing a JWT and revoked by pushing the account JWT with its key listed.
 */

const NO_LIMITS = { subs: -1, data: -1, payload: -1, imports: -1, exports: -1, wildcards: true, conn: -1, leaf: -1 } as const;
const JETSTREAM_NO_LIMITS = { mem_storage: -1, disk_storage: -1, streams: -1, consumer: -1 } as const;

/** Where the subscribers' account sees the BERTH account's JetStream API (a stream source's `external.api`). */
export const BERTH_API_PREFIX = '$JS.berth.API';

/** Seeds of every identity and signing key; only `nats-init` holds all of them. */
export type NatsAuthKeys = Readonly<{
  operator: Readonly<{ seed: string; signingSeed: string }>;
  system: Readonly<{ seed: string }>;
  berth: Readonly<{ seed: string; signingSeed: string }>;
  subscribers: Readonly<{ seed: string; signingSeed: string }>;
}>;

const seedOf = (kp: KeyPair): string => new TextDecoder().decode(kp.getSeed());
export const keyPair = (seed: string): KeyPair => nativeKeyPair(seed);
export const publicKeyOf = (seed: string): string => keyPair(seed).getPublicKey();

export function generateAuthKeys(): NatsAuthKeys {
  return {
    operator: { seed: seedOf(createOperator()), signingSeed: seedOf(createOperator()) },
    system: { seed: seedOf(createAccount()) },
    berth: { seed: seedOf(createAccount()), signingSeed: seedOf(createAccount()) },
    subscribers: { seed: seedOf(createAccount()), signingSeed: seedOf(createAccount()) },
  };
}

/**
 * What a stream in the subscribers' account needs to source SESSION_EVT: create its consumer
 * (named, with the filter in the subject, or the older unnamed form), answer flow control, and
 * receive the deliveries under `berth.deliver.<owner>`. Only the server's sourcing uses them: no
 * subscriber's permissions grant these subjects.
 */
const SOURCE_SUBJECTS = {
  create: `$JS.API.CONSUMER.CREATE.${Streams.events}`,
  createNamed: `$JS.API.CONSUMER.CREATE.${Streams.events}.>`,
  flowControl: '$JS.FC.>',
} as const;

export function berthAccountClaims(keys: Readonly<{ berthSigningKey: string }>): Partial<Account> {
  const exports: Export[] = [
    { name: 'owner-event-source', subject: SOURCE_SUBJECTS.create, type: 'service' },
    { name: 'owner-event-source-named', subject: SOURCE_SUBJECTS.createNamed, type: 'service' },
    { name: 'owner-event-flow-control', subject: SOURCE_SUBJECTS.flowControl, type: 'service' },
    { name: 'owner-event-deliveries', subject: Subjects.allOwnerDeliveries, type: 'stream' },
  ];
  return { signing_keys: [keys.berthSigningKey], limits: { ...NO_LIMITS, ...JETSTREAM_NO_LIMITS }, exports };
}

/** Unix seconds by user public key: JWTs issued at or before that time are refused (and disconnected). */
export type Revocations = Readonly<Record<string, number>>;

export function subscribersAccountClaims(keys: Readonly<{ berthAccount: string; subscribersSigningKey: string }>, revocations: Revocations): Partial<Account> {
  const from = (name: string, subject: string, type: 'service' | 'stream', localSubject?: string): Import => ({
    name,
    subject,
    account: keys.berthAccount,
    type,
    ...(localSubject ? { local_subject: localSubject } : {}),
  });
  const imports: Import[] = [
    from('owner-event-source', SOURCE_SUBJECTS.create, 'service', SOURCE_SUBJECTS.create.replace('$JS.API', BERTH_API_PREFIX)),
    from('owner-event-source-named', SOURCE_SUBJECTS.createNamed, 'service', SOURCE_SUBJECTS.createNamed.replace('$JS.API', BERTH_API_PREFIX)),
    from('owner-event-flow-control', SOURCE_SUBJECTS.flowControl, 'service'),
    from('owner-event-deliveries', Subjects.allOwnerDeliveries, 'stream'),
  ];
  return { signing_keys: [keys.subscribersSigningKey], limits: { ...NO_LIMITS, ...JETSTREAM_NO_LIMITS }, imports, revocations: { ...revocations } };
}

export const operatorJwt = (keys: NatsAuthKeys): Promise<string> =>
  encodeOperator('berth', keyPair(keys.operator.seed), { signing_keys: [publicKeyOf(keys.operator.signingSeed)], system_account: publicKeyOf(keys.system.seed) });

export const systemAccountJwt = (keys: Pick<NatsAuthKeys, 'operator' | 'system'>): Promise<string> =>
  encodeAccount('SYS', keyPair(keys.system.seed), { limits: { ...NO_LIMITS } }, { signer: keyPair(keys.operator.signingSeed) });

export const berthAccountJwt = (keys: NatsAuthKeys): Promise<string> =>
  encodeAccount('BERTH', keyPair(keys.berth.seed), berthAccountClaims({ berthSigningKey: publicKeyOf(keys.berth.signingSeed) }), {
    signer: keyPair(keys.operator.signingSeed),
  });

/** Signs the subscribers' account with the operator signing key; `account` is its public key (no seed needed). */
export function subscribersAccountJwt(input: Readonly<{ operatorSigningSeed: string; account: string; berthAccount: string; signingSeed: string }>, revocations: Revocations): Promise<string> {
  const claims = subscribersAccountClaims({ berthAccount: input.berthAccount, subscribersSigningKey: publicKeyOf(input.signingSeed) }, revocations);
  return encodeAccount('SUBSCRIBERS', input.account, claims, { signer: keyPair(input.operatorSigningSeed) });
}

/** A user's `.creds` file (its JWT and nkey seed): what a NATS client presents. */
export type IssuedUser = Readonly<{ publicKey: string; creds: string; issuedAt: number }>;

/**
 * Signs a user of an account with that account's signing key. A fresh nkey per user, so one user
 * can be revoked on its own.
 */
export async function issueUser(input: Readonly<{ name: string; account: string; signingSeed: string; permissions: NatsPermissions; tags?: readonly string[] }>): Promise<IssuedUser> {
  const user = keyPair(seedOf(createUser()));
  const { permissions } = input;
  const jwt = await encodeUser(
    input.name,
    user,
    input.account,
    {
      pub: { allow: [...permissions.publish], deny: [] },
      sub: { allow: [...permissions.subscribe], deny: [] },
      ...(permissions.respond ? { resp: { max: 1, ttl: 0 } } : {}),
      ...(input.tags ? { tags: [...input.tags] } : {}),
    },
    { signer: keyPair(input.signingSeed) },
  );
  const issuedAt = (JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString('utf8')) as { iat: number }).iat;
  return { publicKey: user.getPublicKey(), creds: new TextDecoder().decode(fmtCreds(jwt, user)), issuedAt };
}
