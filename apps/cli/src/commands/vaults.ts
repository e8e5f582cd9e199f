import { TOKEN_ENDPOINT_AUTH_TYPES } from '@berth/contracts';
import { intOption, requiredOption, type OptionValues } from '../args';
import { UsageError } from '../exit-codes';
import { details, display, table } from '../output/format';
import { str, type Command, type Output } from './command';

type Vault = { id: string; display_name: string; metadata: Record<string, string>; created_at: string; archived_at: string | null };
type RefreshState = { status: string; next_attempt_at: string | null; last_refreshed_at: string | null; last_error: string | null };
type Credential = {
  id: string;
  vault_id: string;
  display_name: string | null;
  auth: {
    type: string;
    mcp_server_url?: string;
    expires_at?: string | null;
    refresh?: { token_endpoint: string; client_id: string; token_endpoint_auth: { type: string }; scope?: string | null } | null;
    secret_name?: string;
    networking?: { type: string; allowed_hosts?: string[] };
    injection_location?: { header: boolean; body: boolean };
  };
  berth?: { refresh: RefreshState | null };
  created_at: string;
  archived_at: string | null;
};
type Validation = {
  credential_id: string;
  status: string;
  validated_at: string;
  refresh: { status: string; http_response: { status_code: number } | null } | null;
  berth?: { detail?: string };
};

const vaultOutput = (v: Vault): Output => ({ json: v, human: details([['id', v.id], ['name', v.display_name], ['metadata', v.metadata], ['created', v.created_at], ['archived', v.archived_at]]) });

const target = (c: Credential): string => c.auth.mcp_server_url ?? `$${c.auth.secret_name ?? ''} → ${c.auth.networking?.type === 'limited' ? (c.auth.networking.allowed_hosts ?? []).join(',') : 'any host'}`;

const injection = (l: { header: boolean; body: boolean }): string => [l.header && 'header', l.body && 'body'].filter(Boolean).join(', ');

/** An OAuth credential's refresh in a line: how, and where it stands (never a secret). */
function refreshText(c: Credential): string {
  const config = c.auth.refresh;
  const state = c.berth?.refresh;
  if (!config || !state) return 'none (Berth does not refresh this token)';
  const how = `${config.token_endpoint} as ${config.client_id} (${config.token_endpoint_auth.type})`;
  const where = state.status === 'scheduled' ? (state.next_attempt_at ? `next ${state.next_attempt_at}` : 'none planned (no expiry)') : `${state.status}${state.next_attempt_at ? `, next try ${state.next_attempt_at}` : ''}`;
  return `${how}: ${where}${state.last_error ? `; last error: ${state.last_error}` : ''}`;
}

const credentialOutput = (c: Credential): Output => ({
  json: c,
  human: details([
    ['id', c.id],
    ['vault', c.vault_id],
    ['name', c.display_name],
    ['type', c.auth.type],
    ['for', target(c)],
    ...(c.auth.type === 'mcp_oauth' ? [['expires', c.auth.expires_at ?? 'not known'] as const, ['refresh', refreshText(c)] as const] : []),
    ...(c.auth.injection_location ? [['injected into', injection(c.auth.injection_location)] as const] : []),
    ['created', c.created_at],
    ['archived', c.archived_at],
  ]),
});

/** A secret from the variable an option names (`--secret-env NAME`, `--refresh-token-env NAME`), never an argument's own value. */
function secretFromEnv(o: OptionValues, option: string, env: Readonly<Record<string, string | undefined>>): string | undefined {
  const name = str(o, option);
  if (name === undefined) return undefined;
  const value = env[name];
  if (!value) throw new UsageError(`--${option} ${name}: the variable is not set`);
  return value;
}

/**
 * The secret is read from stdin (`--secret-stdin`) or the variable `--secret-env` names, never from
 * an argument: arguments end up in shell history and `ps`.
 */
async function readSecret(o: OptionValues, env: Readonly<Record<string, string | undefined>>, stdin: () => Promise<string>): Promise<string> {
  const fromEnv = secretFromEnv(o, 'secret-env', env);
  if (fromEnv !== undefined) return fromEnv;
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

const secretGiven = (o: OptionValues): boolean => o['secret-stdin'] === true || typeof o['secret-env'] === 'string';

const refreshCreateOptions = {
  'refresh-token-endpoint': { type: 'string', help: 'mcp_oauth: Berth refreshes the token at this OAuth token endpoint (https://…)' },
  'refresh-client-id': { type: 'string', help: 'mcp_oauth: the OAuth client id used to refresh' },
  'refresh-token-env': { type: 'string', help: 'mcp_oauth: the refresh token, from this environment variable' },
  'refresh-client-auth': { type: 'string', help: 'mcp_oauth: how the client authenticates: none (default), client_secret_basic, client_secret_post' },
  'refresh-client-secret-env': { type: 'string', help: 'mcp_oauth: the client secret (client_secret_basic/post), from this environment variable' },
  'refresh-scope': { type: 'string', help: 'mcp_oauth: the scope sent with each refresh' },
  'refresh-resource': { type: 'string', help: 'mcp_oauth: the resource indicator (RFC 8707) sent with each refresh' },
} as const;

const refreshUpdateOptions = {
  'refresh-token-env': { type: 'string', help: 'mcp_oauth: a new refresh token, from this environment variable' },
  'refresh-client-secret-env': { type: 'string', help: 'mcp_oauth: a new client secret, from this environment variable' },
  'refresh-scope': { type: 'string', help: 'mcp_oauth: a new scope for refreshes ("" clears it)' },
} as const;

const REFRESH_OPTIONS = Object.keys(refreshCreateOptions);
const refreshGiven = (o: OptionValues): boolean => REFRESH_OPTIONS.some((name) => o[name] !== undefined);

/** `--refresh-*` as the create's `refresh` (undefined when none was given). */
function refreshCreate(o: OptionValues, env: Readonly<Record<string, string | undefined>>): Record<string, unknown> | undefined {
  if (!refreshGiven(o)) return undefined;
  const token_endpoint = str(o, 'refresh-token-endpoint');
  const client_id = str(o, 'refresh-client-id');
  if (!token_endpoint || !client_id) throw new UsageError('a refresh needs --refresh-token-endpoint URL, --refresh-client-id ID and --refresh-token-env VAR');
  const refresh_token = secretFromEnv(o, 'refresh-token-env', env);
  if (!refresh_token) throw new UsageError('give the refresh token with --refresh-token-env VAR (never as an argument)');
  const method = str(o, 'refresh-client-auth') ?? 'none';
  if (!(TOKEN_ENDPOINT_AUTH_TYPES as readonly string[]).includes(method)) throw new UsageError(`--refresh-client-auth must be ${TOKEN_ENDPOINT_AUTH_TYPES.join(', ')}; got "${method}"`);
  const client_secret = secretFromEnv(o, 'refresh-client-secret-env', env);
  if (method === 'none' && client_secret) throw new UsageError('--refresh-client-secret-env goes with --refresh-client-auth client_secret_basic or client_secret_post');
  if (method !== 'none' && !client_secret) throw new UsageError(`--refresh-client-auth ${method} needs the client secret: --refresh-client-secret-env VAR`);
  const scope = str(o, 'refresh-scope');
  const resource = str(o, 'refresh-resource');
  return {
    token_endpoint,
    client_id,
    refresh_token,
    token_endpoint_auth: method === 'none' ? { type: 'none' } : { type: method, client_secret },
    ...(scope === undefined ? {} : { scope }),
    ...(resource === undefined ? {} : { resource }),
  };
}

/** `--refresh-*` of an update as its `refresh` (undefined when none was given); the client auth method stays the credential's. */
function refreshUpdate(current: Credential, o: OptionValues, env: Readonly<Record<string, string | undefined>>): Record<string, unknown> | undefined {
  const refresh_token = secretFromEnv(o, 'refresh-token-env', env);
  const client_secret = secretFromEnv(o, 'refresh-client-secret-env', env);
  const scope = str(o, 'refresh-scope');
  if (refresh_token === undefined && client_secret === undefined && scope === undefined) return undefined;
  const config = current.auth.refresh;
  if (!config) throw new UsageError('--refresh-* apply to an mcp_oauth credential created with a refresh (--refresh-token-endpoint …); this one has none');
  return {
    ...(refresh_token === undefined ? {} : { refresh_token }),
    ...(scope === undefined ? {} : { scope }),
    ...(client_secret === undefined ? {} : { token_endpoint_auth: { type: config.token_endpoint_auth.type, client_secret } }),
  };
}

const expiresOption = { 'expires-at': { type: 'string', help: 'mcp_oauth: when the access token expires (RFC 3339, e.g. 2026-06-01T12:00:00Z; "none": not known)' } } as const;
const injectOption = { inject: { type: 'string', help: 'variable: where the egress puts the secret: header | body | header,body (default header)' } } as const;

/** `--expires-at T|none` as the API's `expires_at` (undefined: not given). */
function expiresAt(o: OptionValues): string | null | undefined {
  const raw = typeof o['expires-at'] === 'string' ? (o['expires-at'] as string) : undefined;
  if (raw === undefined) return undefined;
  if (raw === 'none') return null;
  if (Number.isNaN(Date.parse(raw))) throw new UsageError(`--expires-at must be an RFC 3339 time such as 2026-06-01T12:00:00Z, or none; got "${raw}"`);
  return raw;
}

/** `--inject header,body` as the API's `injection_location` (undefined: not given). */
function injectionLocation(o: OptionValues): { header: boolean; body: boolean } | undefined {
  const raw = typeof o['inject'] === 'string' ? (o['inject'] as string) : undefined;
  if (raw === undefined) return undefined;
  const places = raw.split(',').map((p) => p.trim());
  if (places.length === 0 || places.some((p) => p !== 'header' && p !== 'body')) throw new UsageError(`--inject must be header, body or header,body; got "${raw}"`);
  return { header: places.includes('header'), body: places.includes('body') };
}

/** The update's `auth` for `current`'s type: the new secret in its type's field, and the options that apply to that type. */
function authUpdate(current: Credential, secret: string | null, o: OptionValues, env: Readonly<Record<string, string | undefined>>): Record<string, unknown> {
  const { type } = current.auth;
  const expires = expiresAt(o);
  const refresh = type === 'mcp_oauth' ? refreshUpdate(current, o, env) : undefined;
  if (type !== 'mcp_oauth' && refreshGiven(o)) throw new UsageError(`--refresh-* apply to mcp_oauth credentials; this one is ${type}`);
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
    ...(refresh === undefined ? {} : { refresh }),
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
      oauth: { type: 'boolean', help: 'with --mcp-server: the secret is an OAuth access token (mcp_oauth; refreshed by Berth with --refresh-*)' },
      ...expiresOption,
      ...refreshCreateOptions,
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
      if (refreshGiven(o) && !oauth) throw new UsageError('--refresh-* go with --mcp-server URL --oauth');
      const inject = injectionLocation(o);
      if (inject !== undefined && !variable) throw new UsageError('--inject goes with --variable');
      const refresh = refreshCreate(o, env);
      const secret = await readSecret(o, env, readStdin);
      const hosts = Array.isArray(o['host']) ? (o['host'] as string[]) : [];
      const auth = server
        ? oauth
          ? { type: 'mcp_oauth', mcp_server_url: server, access_token: secret, ...(expires === undefined ? {} : { expires_at: expires }), ...(refresh === undefined ? {} : { refresh }) }
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
    options: { ...secretOptions, ...expiresOption, ...refreshUpdateOptions },
    summary: 'replace a credential’s secret (an OAuth access token with its --expires-at, and a new --refresh-token-env)',
    run: async ({ api, env }, a, o) => {
      const current = await api.request<Credential>('GET', `/v1/vaults/${a.vault}/credentials/${a.credential}`);
      const auth = authUpdate(current, await readSecret(o, env, readStdin), o, env);
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
      ...refreshUpdateOptions,
      ...secretOptions,
    },
    summary: 'update a credential: its name, an OAuth token’s expiry or refresh secrets, a variable’s hosts or injection, and a new secret if given',
    run: async ({ api, env }, a, o) => {
      const current = await api.request<Credential>('GET', `/v1/vaults/${a.vault}/credentials/${a.credential}`);
      const auth = authUpdate(current, secretGiven(o) ? await readSecret(o, env, readStdin) : null, o, env);
      const name = str(o, 'name');
      const body = { ...(Object.keys(auth).length > 1 ? { auth } : {}), ...(name === undefined ? {} : { display_name: name }) };
      if (Object.keys(body).length === 0) throw new UsageError('nothing to update: give --name, --expires-at, --refresh-*, --host, --any-host, --inject or a new secret');
      return credentialOutput(await api.request<Credential>('POST', `/v1/vaults/${a.vault}/credentials/${a.credential}`, { body }));
    },
  },
  {
    name: ['vaults', 'credentials', 'validate'],
    args: ['vault', 'credential'],
    options: {},
    summary: 'validate an mcp_oauth credential (its expiry and refresh; Berth does not call the MCP server)',
    run: async ({ api }, a) => {
      const v = await api.request<Validation>('POST', `/v1/vaults/${a.vault}/credentials/${a.credential}/mcp_oauth_validate`);
      const refresh = v.refresh === null ? null : `${v.refresh.status}${v.refresh.http_response ? ` (HTTP ${v.refresh.http_response.status_code})` : ''}`;
      return { json: v, human: details([['credential', v.credential_id], ['status', v.status], ['refresh', refresh], ['detail', v.berth?.detail ?? null], ['validated', v.validated_at]]) };
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
