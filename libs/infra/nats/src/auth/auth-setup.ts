import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  berthAccountJwt,
  generateAuthKeys,
  issueUser,
  operatorJwt,
  publicKeyOf,
  subscribersAccountJwt,
  systemAccountJwt,
  type NatsAuthKeys,
} from './accounts';
import { ACCOUNT_PUSHER_PERMISSIONS, SERVICE_NAMES, SUBSCRIBERS_ADMIN_PERMISSIONS, servicePermissions, type NatsPermissions, type ServiceName } from './permissions';

/**
 * What the gateway needs to mint and revoke subscriber credentials (`BERTH_NATS_ISSUER`): the
 * operator signing key (to re-sign the subscribers' account with its revocations), that account's
 * signing key (to sign subscriber users), and its two users of other accounts.
 */
export type NatsIssuerMaterial = Readonly<{
  operator_signing_seed: string;
  berth_account: string;
  subscribers_account: string;
  subscribers_signing_seed: string;
  /** The subscribers' account user that creates the owners' streams. */
  subscribers_admin_creds: string;
  /** The system account user that pushes account JWTs to the resolver. */
  account_pusher_creds: string;
}>;

/**
 * The files `nats-init` writes into one directory (secrets 0600):
 * `keys.json` every seed, `server-auth.conf` the block nats-server includes, `creds/<service>.creds`
 * one per service, `issuer.json` the gateway's minting material.
 */
export const NatsAuthFiles = {
  keys: 'keys.json',
  serverConfig: 'server-auth.conf',
  issuer: 'issuer.json',
  creds: (user: string) => join('creds', `${user}.creds`),
} as const;

const writeSecret = (path: string, text: string): void => {
  writeFileSync(path, text, { mode: 0o600 });
  chmodSync(path, 0o600);
};

/** The nats-server configuration block for operator mode with a full resolver in `resolverDir`. */
export async function serverAuthConfig(keys: NatsAuthKeys, resolverDir: string): Promise<string> {
  const preload: [string, string][] = [
    [publicKeyOf(keys.system.seed), await systemAccountJwt(keys)],
    [publicKeyOf(keys.berth.seed), await berthAccountJwt(keys)],
    [publicKeyOf(keys.subscribers.seed), await subscribersAccountJwt(subscribersSigner(keys), {})],
  ];
  return [
    `operator: ${await operatorJwt(keys)}`,
    `system_account: ${publicKeyOf(keys.system.seed)}`,
    // A full resolver keeps pushed account JWTs (revocations) in its directory across restarts;
    // preloads only fill it when it has nothing newer.
    `resolver: { type: full, dir: ${JSON.stringify(resolverDir)}, allow_delete: false, interval: "2m" }`,
    'resolver_preload: {',
    ...preload.map(([pub, jwt]) => `  ${pub}: ${jwt}`),
    '}',
    '',
  ].join('\n');
}

const subscribersSigner = (keys: NatsAuthKeys) => ({
  operatorSigningSeed: keys.operator.signingSeed,
  account: publicKeyOf(keys.subscribers.seed),
  berthAccount: publicKeyOf(keys.berth.seed),
  signingSeed: keys.subscribers.signingSeed,
});

/** A user of the BERTH account (a service, or a test's all-powerful user). */
export async function issueBerthUser(keys: NatsAuthKeys, name: string, permissions: NatsPermissions): Promise<string> {
  return (await issueUser({ name, account: publicKeyOf(keys.berth.seed), signingSeed: keys.berth.signingSeed, permissions })).creds;
}

export const issueServiceCreds = (keys: NatsAuthKeys, service: ServiceName): Promise<string> => issueBerthUser(keys, service, servicePermissions(service));

export async function issuerMaterial(keys: NatsAuthKeys): Promise<NatsIssuerMaterial> {
  const signer = subscribersSigner(keys);
  const pusher = await issueUser({ name: 'account-pusher', account: publicKeyOf(keys.system.seed), signingSeed: keys.system.seed, permissions: ACCOUNT_PUSHER_PERMISSIONS });
  const admin = await issueUser({ name: 'subscribers-admin', account: signer.account, signingSeed: signer.signingSeed, permissions: SUBSCRIBERS_ADMIN_PERMISSIONS });
  return {
    operator_signing_seed: keys.operator.signingSeed,
    berth_account: signer.berthAccount,
    subscribers_account: signer.account,
    subscribers_signing_seed: signer.signingSeed,
    subscribers_admin_creds: admin.creds,
    account_pusher_creds: pusher.creds,
  };
}

export type EnsuredNatsAuth = Readonly<{ dir: string; created: boolean; issued: readonly ServiceName[] }>;

/**
 * Creates the auth material in `dir` once, and a creds file for every declared service that has
 * none (so a service added later gets its user without touching the others). Existing keys,
 * server config and creds are kept: the server's resolver holds revocations pushed since.
 */
export async function ensureNatsAuth(dir: string, resolverDir: string): Promise<EnsuredNatsAuth> {
  mkdirSync(join(dir, 'creds'), { recursive: true, mode: 0o700 });
  const keysPath = join(dir, NatsAuthFiles.keys);
  const created = !existsSync(keysPath);
  const keys: NatsAuthKeys = created ? generateAuthKeys() : (JSON.parse(readFileSync(keysPath, 'utf8')) as NatsAuthKeys);
  if (created) {
    writeSecret(keysPath, JSON.stringify(keys, null, 2) + '\n');
    writeSecret(join(dir, NatsAuthFiles.serverConfig), await serverAuthConfig(keys, resolverDir));
    writeSecret(join(dir, NatsAuthFiles.issuer), JSON.stringify(await issuerMaterial(keys), null, 2) + '\n');
  }
  const issued: ServiceName[] = [];
  for (const service of SERVICE_NAMES) {
    const path = join(dir, NatsAuthFiles.creds(service));
    if (existsSync(path)) continue;
    writeSecret(path, await issueServiceCreds(keys, service));
    issued.push(service);
  }
  return { dir, created, issued };
}

export const readAuthKeys = (dir: string): NatsAuthKeys => JSON.parse(readFileSync(join(dir, NatsAuthFiles.keys), 'utf8')) as NatsAuthKeys;

/**
 * A nats-server that ran without auth (Berth before per-service users) kept its streams under the
 * global account `$G`; in operator mode they belong to the BERTH account. Moves them there once,
 * before the server starts, so every stored event and consumer position carries over. Returns
 * whether it moved anything.
 */
export function adoptAnonymousJetStream(storeDir: string, keys: NatsAuthKeys): boolean {
  const from = join(storeDir, 'jetstream', '$G');
  const to = join(storeDir, 'jetstream', publicKeyOf(keys.berth.seed));
  if (!existsSync(from)) return false;
  if (existsSync(to)) throw new Error(`${from} and ${to} both exist: the anonymous streams were adopted before and recreated since; merge them by hand`);
  renameSync(from, to);
  return true;
}
