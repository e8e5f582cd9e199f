import { intOption, requiredOption } from '../args';
import { UsageError } from '../exit-codes';
import { details, display, table } from '../output/format';
import { str, type Command, type Output } from './command';

type Vault = { id: string; display_name: string; metadata: Record<string, string>; created_at: string; archived_at: string | null };
type Credential = {
  id: string;
  vault_id: string;
  display_name: string | null;
  auth: { type: string; mcp_server_url?: string; expires_at?: string | null; secret_name?: string; networking?: { type: string; allowed_hosts?: string[] }; injection_location?: { header: boolean; body: boolean } };
  created_at: string;
  archived_at: string | null;
};
type Validation = { credential_id: string; status: string; validated_at: string; berth?: { detail?: string } };

const vaultOutput = (v: Vault): Output => ({ json: v, human: details([['id', v.id], ['name', v.display_name], ['metadata', v.metadata], ['created', v.created_at], ['archived', v.archived_at]]) });

const target = (c: Credential): string => c.auth.mcp_server_url ?? `$${c.auth.secret_name ?? ''} → ${c.auth.networking?.type === 'limited' ? (c.auth.networking.allowed_hosts ?? []).join(',') : 'any host'}`;

const injection = (l: { header: boolean; body: boolean }): string => [l.header && 'header', l.body && 'body'].filter(Boolean).join(', ');

const credentialOutput = (c: Credential): Output => ({
  json: c,
  human: details([
    ['id', c.id],
    ['vault', c.vault_id],
    ['name', c.display_name],
    ['type', c.auth.type],
    ['for', target(c)],
    ...(c.auth.type === 'mcp_oauth' ? [['expires', c.auth.expires_at ?? 'not known'] as const] : []),
    ...(c.auth.injection_location ? [['injected into', injection(c.auth.injection_location)] as const] : []),
    ['created', c.created_at],
    ['archived', c.archived_at],
  ]),
});

/**
 * The secret is read from stdin (`--secret-stdin`) or the variable `--secret-env` names, never from
 * an argument: arguments end up in shell history and `ps`.
 */
async function readSecret(o: Record<string, unknown>, env: Readonly<Record<string, string | undefined>>, stdin: () => Promise<string>): Promise<string> {
  const fromEnv = typeof o['secret-env'] === 'string' ? (o['secret-env'] as string) : undefined;
  if (fromEnv) {
    const value = env[fromEnv];
    if (!value) throw new UsageError(`--secret-env ${fromEnv}: the variable is not set`);
    return value;
  }
  if (o['secret-stdin']) {
    const value = (await stdin()).replace(/\r?\n$/, '');
    if (!value) throw new UsageError('--secret-stdin: nothing was read');
    return value;
  }
  throw new UsageError('give the secret with --secret-stdin or --secret-env NAME (never as an argument)');
}

const readStdin = async (): Promise<string> => {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
};

const secretOptions = {
  'secret-stdin': { type: 'boolean', help: 'read the secret from stdin' },
  'secret-env': { type: 'string', help: 'read the secret from this environment variable' },
} as const;

const secretGiven = (o: Record<string, unknown>): boolean => o['secret-stdin'] === true || typeof o['secret-env'] === 'string';

const expiresOption = { 'expires-at': { type: 'string', help: 'mcp_oauth: when the access token expires (RFC 3339, e.g. 2026-06-01T12:00:00Z; "none": not known)' } } as const;
const injectOption = { inject: { type: 'string', help: 'variable: where the egress puts the secret: header | body | header,body (default header)' } } as const;

/** `--expires-at T|none` as the API's `expires_at` (undefined: not given). */
function expiresAt(o: Record<string, unknown>): string | null | undefined {
  const raw = typeof o['expires-at'] === 'string' ? (o['expires-at'] as string) : undefined;
  if (raw === undefined) return undefined;
  if (raw === 'none') return null;
  if (Number.isNaN(Date.parse(raw))) throw new UsageError(`--expires-at must be an RFC 3339 time such as 2026-06-01T12:00:00Z, or none; got "${raw}"`);
  return raw;
}

/** `--inject header,body` as the API's `injection_location` (undefined: not given). */
function injectionLocation(o: Record<string, unknown>): { header: boolean; body: boolean } | undefined {
  const raw = typeof o['inject'] === 'string' ? (o['inject'] as string) : undefined;
  if (raw === undefined) return undefined;
  const places = raw.split(',').map((p) => p.trim());
  if (places.length === 0 || places.some((p) => p !== 'header' && p !== 'body')) throw new UsageError(`--inject must be header, body or header,body; got "${raw}"`);
  return { header: places.includes('header'), body: places.includes('body') };
}

/** The update's `auth` for a credential of `type`: the new secret in its type's field, and the options that apply to that type. */
function authUpdate(type: string, secret: string | null, o: Record<string, unknown>): Record<string, unknown> {
  const expires = expiresAt(o);
  const hosts = Array.isArray(o['host']) ? (o['host'] as string[]) : [];
  const inject = injectionLocation(o);
  if (type !== 'mcp_oauth' && expires !== undefined) throw new UsageError(`--expires-at applies to mcp_oauth credentials; this one is ${type}`);
  if (type !== 'environment_variable' && (hosts.length > 0 || o['any-host'] === true || inject !== undefined)) throw new UsageError(`--host, --any-host and --inject apply to environment_variable credentials; this one is ${type}`);
  if (hosts.length > 0 && o['any-host'] === true) throw new UsageError('give --host H… or --any-host, not both');
  const field = type === 'static_bearer' ? 'token' : type === 'mcp_oauth' ? 'access_token' : 'secret_value';
  return {
    type,
    ...(secret === null ? {} : { [field]: secret }),
    ...(expires === undefined ? {} : { expires_at: expires }),
    ...(hosts.length > 0 ? { networking: { type: 'limited', allowed_hosts: hosts } } : o['any-host'] === true ? { networking: { type: 'unrestricted' } } : {}),
    ...(inject === undefined ? {} : { injection_location: inject }),
  };
}

export const vaultCommands: readonly Command[] = [
  {
    name: ['vaults', 'create'],
    args: [],
    options: { name: { type: 'string', help: 'display name' } },
    summary: 'create a vault',
    run: async ({ api }, _a, o) => vaultOutput(await api.request<Vault>('POST', '/v1/vaults', { body: { display_name: requiredOption(o, 'name') } })),
  },
  {
    name: ['vaults', 'list'],
    args: [],
    options: { 'include-archived': { type: 'boolean', help: 'also list archived vaults' }, limit: { type: 'string', help: 'page size' } },
    summary: 'list vaults',
    run: async ({ api }, _a, o) => {
      const page = await api.request<{ data: Vault[] }>('GET', '/v1/vaults', { query: { limit: intOption(o, 'limit', 1), include_archived: o['include-archived'] ? true : undefined } });
      return { json: page, human: table(page.data, [{ header: 'id', value: (v) => v.id }, { header: 'name', value: (v) => v.display_name }, { header: 'archived', value: (v) => (v.archived_at ? 'yes' : '') }]) };
    },
  },
  { name: ['vaults', 'get'], args: ['vault'], options: {}, summary: 'show a vault', run: async ({ api }, a) => vaultOutput(await api.request<Vault>('GET', `/v1/vaults/${a.vault}`)) },
  { name: ['vaults', 'archive'], args: ['vault'], options: {}, summary: 'archive a vault', run: async ({ api }, a) => vaultOutput(await api.request<Vault>('POST', `/v1/vaults/${a.vault}/archive`)) },
  {
    name: ['vaults', 'delete'],
    args: ['vault'],
    options: {},
    summary: 'delete a vault and its credentials',
    run: async ({ api }, a) => ({ json: await api.request<unknown>('DELETE', `/v1/vaults/${a.vault}`), human: `deleted ${a.vault}` }),
  },
  {
    name: ['vaults', 'credentials', 'add'],
    args: ['vault'],
    options: {
      'mcp-server': { type: 'string', help: 'MCP server URL: a bearer token for it' },
      oauth: { type: 'boolean', help: 'with --mcp-server: the secret is an OAuth access token (mcp_oauth; Berth does not refresh it)' },
      ...expiresOption,
      variable: { type: 'string', help: 'environment variable name: a secret for the hosts of --host' },
      host: { type: 'string', multiple: true, help: 'host the variable’s secret may go to (repeat; none: any host)' },
      ...injectOption,
      name: { type: 'string', help: 'display name' },
      ...secretOptions,
    },
    summary: 'add a credential (the secret from stdin or a variable; write-only)',
    run: async ({ api, env }, a, o) => {
      const server = str(o, 'mcp-server');
      const variable = str(o, 'variable');
      if (Boolean(server) === Boolean(variable)) throw new UsageError('give exactly one of --mcp-server URL and --variable NAME');
      const oauth = o['oauth'] === true;
      if (variable && oauth) throw new UsageError('--oauth goes with --mcp-server');
      const expires = expiresAt(o);
      if (expires !== undefined && !oauth) throw new UsageError('--expires-at goes with --mcp-server URL --oauth');
      const inject = injectionLocation(o);
      if (inject !== undefined && !variable) throw new UsageError('--inject goes with --variable');
      const secret = await readSecret(o, env, readStdin);
      const hosts = Array.isArray(o['host']) ? (o['host'] as string[]) : [];
      const auth = server
        ? oauth
          ? { type: 'mcp_oauth', mcp_server_url: server, access_token: secret, ...(expires === undefined ? {} : { expires_at: expires }) }
          : { type: 'static_bearer', mcp_server_url: server, token: secret }
        : {
            type: 'environment_variable',
            secret_name: variable,
            secret_value: secret,
            networking: hosts.length ? { type: 'limited', allowed_hosts: hosts } : { type: 'unrestricted' },
            ...(inject === undefined ? {} : { injection_location: inject }),
          };
      return credentialOutput(await api.request<Credential>('POST', `/v1/vaults/${a.vault}/credentials`, { body: { auth, display_name: str(o, 'name') } }));
    },
  },
  {
    name: ['vaults', 'credentials', 'list'],
    args: ['vault'],
    options: { 'include-archived': { type: 'boolean', help: 'also list archived credentials' } },
    summary: 'list a vault’s credentials (never their secrets)',
    run: async ({ api }, a, o) => {
      const page = await api.request<{ data: Credential[] }>('GET', `/v1/vaults/${a.vault}/credentials`, { query: { include_archived: o['include-archived'] ? true : undefined } });
      return {
        json: page,
        human: table(page.data, [
          { header: 'id', value: (c) => c.id },
          { header: 'name', value: (c) => display(c.display_name) },
          { header: 'type', value: (c) => c.auth.type },
          { header: 'for', value: target },
          { header: 'archived', value: (c) => (c.archived_at ? 'yes' : '') },
        ]),
      };
    },
  },
  {
    name: ['vaults', 'credentials', 'rotate'],
    args: ['vault', 'credential'],
    options: { ...secretOptions, ...expiresOption },
    summary: 'replace a credential’s secret (an OAuth access token with its --expires-at)',
    run: async ({ api, env }, a, o) => {
      const current = await api.request<Credential>('GET', `/v1/vaults/${a.vault}/credentials/${a.credential}`);
      const auth = authUpdate(current.auth.type, await readSecret(o, env, readStdin), o);
      return credentialOutput(await api.request<Credential>('POST', `/v1/vaults/${a.vault}/credentials/${a.credential}`, { body: { auth } }));
    },
  },
  {
    name: ['vaults', 'credentials', 'update'],
    args: ['vault', 'credential'],
    options: {
      name: { type: 'string', help: 'display name' },
      ...expiresOption,
      host: { type: 'string', multiple: true, help: 'variable: the hosts its secret may go to, replacing the list (repeat)' },
      'any-host': { type: 'boolean', help: 'variable: its secret may go to any host the environment allows' },
      ...injectOption,
      ...secretOptions,
    },
    summary: 'update a credential: its name, an OAuth token’s expiry, a variable’s hosts or injection, and a new secret if given',
    run: async ({ api, env }, a, o) => {
      const current = await api.request<Credential>('GET', `/v1/vaults/${a.vault}/credentials/${a.credential}`);
      const auth = authUpdate(current.auth.type, secretGiven(o) ? await readSecret(o, env, readStdin) : null, o);
      const name = str(o, 'name');
      const body = { ...(Object.keys(auth).length > 1 ? { auth } : {}), ...(name === undefined ? {} : { display_name: name }) };
      if (Object.keys(body).length === 0) throw new UsageError('nothing to update: give --name, --expires-at, --host, --any-host, --inject or a new secret');
      return credentialOutput(await api.request<Credential>('POST', `/v1/vaults/${a.vault}/credentials/${a.credential}`, { body }));
    },
  },
  {
    name: ['vaults', 'credentials', 'validate'],
    args: ['vault', 'credential'],
    options: {},
    summary: 'validate an mcp_oauth credential (its expiry; Berth does not call the MCP server)',
    run: async ({ api }, a) => {
      const v = await api.request<Validation>('POST', `/v1/vaults/${a.vault}/credentials/${a.credential}/mcp_oauth_validate`);
      return { json: v, human: details([['credential', v.credential_id], ['status', v.status], ['detail', v.berth?.detail ?? null], ['validated', v.validated_at]]) };
    },
  },
  {
    name: ['vaults', 'credentials', 'archive'],
    args: ['vault', 'credential'],
    options: {},
    summary: 'archive a credential',
    run: async ({ api }, a) => credentialOutput(await api.request<Credential>('POST', `/v1/vaults/${a.vault}/credentials/${a.credential}/archive`)),
  },
  {
    name: ['vaults', 'credentials', 'delete'],
    args: ['vault', 'credential'],
    options: {},
    summary: 'delete a credential',
    run: async ({ api }, a) => ({ json: await api.request<unknown>('DELETE', `/v1/vaults/${a.vault}/credentials/${a.credential}`), human: `deleted ${a.credential}` }),
  },
];
