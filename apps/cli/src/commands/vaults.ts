import { intOption, requiredOption } from '../args';
import { UsageError } from '../exit-codes';
import { details, display, table } from '../output/format';
import { str, type Command, type Output } from './command';

type Vault = { id: string; display_name: string; metadata: Record<string, string>; created_at: string; archived_at: string | null };
type Credential = { id: string; vault_id: string; display_name: string | null; auth: { type: string; mcp_server_url?: string; secret_name?: string; networking?: { type: string; allowed_hosts?: string[] } }; created_at: string; archived_at: string | null };

const vaultOutput = (v: Vault): Output => ({ json: v, human: details([['id', v.id], ['name', v.display_name], ['metadata', v.metadata], ['created', v.created_at], ['archived', v.archived_at]]) });

const target = (c: Credential): string => c.auth.mcp_server_url ?? `$${c.auth.secret_name ?? ''} → ${c.auth.networking?.type === 'limited' ? (c.auth.networking.allowed_hosts ?? []).join(',') : 'any host'}`;

const credentialOutput = (c: Credential): Output => ({
  json: c,
  human: details([['id', c.id], ['vault', c.vault_id], ['name', c.display_name], ['type', c.auth.type], ['for', target(c)], ['created', c.created_at], ['archived', c.archived_at]]),
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
      variable: { type: 'string', help: 'environment variable name: a secret for the hosts of --host' },
      host: { type: 'string', multiple: true, help: 'host the variable’s secret may go to (repeat; none: any host)' },
      name: { type: 'string', help: 'display name' },
      ...secretOptions,
    },
    summary: 'add a credential (the secret from stdin or a variable; write-only)',
    run: async ({ api, env }, a, o) => {
      const server = str(o, 'mcp-server');
      const variable = str(o, 'variable');
      if (Boolean(server) === Boolean(variable)) throw new UsageError('give exactly one of --mcp-server URL and --variable NAME');
      const secret = await readSecret(o, env, readStdin);
      const hosts = Array.isArray(o['host']) ? (o['host'] as string[]) : [];
      const auth = server
        ? { type: 'static_bearer', mcp_server_url: server, token: secret }
        : { type: 'environment_variable', secret_name: variable, secret_value: secret, networking: hosts.length ? { type: 'limited', allowed_hosts: hosts } : { type: 'unrestricted' } };
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
    options: secretOptions,
    summary: 'replace a credential’s secret',
    run: async ({ api, env }, a, o) => {
      const current = await api.request<Credential>('GET', `/v1/vaults/${a.vault}/credentials/${a.credential}`);
      const secret = await readSecret(o, env, readStdin);
      const field = current.auth.type === 'static_bearer' ? 'token' : current.auth.type === 'mcp_oauth' ? 'access_token' : 'secret_value';
      return credentialOutput(await api.request<Credential>('POST', `/v1/vaults/${a.vault}/credentials/${a.credential}`, { body: { auth: { type: current.auth.type, [field]: secret } } }));
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
