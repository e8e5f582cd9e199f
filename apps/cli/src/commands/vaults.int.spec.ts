import type { IncomingMessage } from 'node:http';
import { runCli } from '../cli';
import { ExitCode } from '../exit-codes';
import { JournalServer } from '../test-support/journal-server';

// `berth vaults …` against a loopback server playing the API: secrets never taken from arguments.

/** What the loopback API answers for each credential id. */
const AUTHS: Record<string, unknown> = {
  vcrd_1: { type: 'static_bearer', mcp_server_url: 'https://mcp.example.com/' },
  vcrd_oauth: { type: 'mcp_oauth', mcp_server_url: 'https://mcp.example.com/', expires_at: '2026-06-01T12:00:00Z' },
  vcrd_var: { type: 'environment_variable', secret_name: 'DEPLOY_TOKEN', networking: { type: 'unrestricted' }, injection_location: { header: true, body: false } },
  vcrd_refresh: {
    type: 'mcp_oauth',
    mcp_server_url: 'https://mcp.example.com/',
    expires_at: '2026-06-01T12:00:00Z',
    refresh: { token_endpoint: 'https://auth.example.com/token', client_id: 'berth', token_endpoint_auth: { type: 'client_secret_basic' }, scope: null, resource: null },
  },
};
/** Where refreshing stands, for the credential that refreshes. */
const BERTH: Record<string, unknown> = {
  vcrd_refresh: { refresh: { status: 'failed', next_attempt_at: null, last_attempt_at: 't', last_refreshed_at: null, last_error: 'the token endpoint answered 400 invalid_grant' } },
};

describe('berth vaults', () => {
  const seen: { method: string; path: string; body: unknown }[] = [];
  let server: JournalServer;
  beforeAll(async () => {
    server = await new JournalServer({
      events: [],
      route: (req: IncomingMessage, res, body) => {
        const path = new URL(req.url ?? '/', 'http://x').pathname;
        const parsed = body ? JSON.parse(body) : null;
        seen.push({ method: req.method ?? '', path, body: parsed });
        const id = /\/credentials\/(vcrd_\w+)/.exec(path)?.[1] ?? 'vcrd_1';
        const credential = { id, vault_id: 'vlt_1', display_name: null, auth: AUTHS[id] ?? AUTHS['vcrd_1'], berth: BERTH[id] ?? { refresh: null }, created_at: 't', archived_at: null };
        if (path.endsWith('/mcp_oauth_validate')) {
          const refresh = id === 'vcrd_refresh' ? { status: 'failed', http_response: { status_code: 400, content_type: 'application/json', body: '{}', body_truncated: false } } : { status: 'no_refresh_token', http_response: null };
          const validation = { type: 'vault_credential_validation', credential_id: id, vault_id: 'vlt_1', status: 'invalid', has_refresh_token: id === 'vcrd_refresh', mcp_probe: null, refresh, validated_at: 't', berth: { probed: false, expired: true, detail: 'the access token expired at 2020-01-01T00:00:00Z' } };
          return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(validation)), true;
        }
        if (path.startsWith('/v1/vaults/vlt_1/credentials')) return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(credential)), true;
        const session = { id: 'sesn_v', status: 'idle', title: null, agent: { id: 'agent_1', version: 1 }, environment_id: 'env_1', vault_ids: parsed?.vault_ids ?? [], created_at: 't' };
        if (path === '/v1/sessions') return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(session)), true;
        return false;
      },
    }).start();
  });
  afterAll(() => server.stop());

  const run = async (argv: string[], env: Record<string, string> = {}) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(argv, { env: { BERTH_API_URL: server.url, BERTH_API_KEY: 'good', ...env }, io: { out: (t) => out.push(t), err: (t) => err.push(t) } });
    return { code, out: out.join('\n'), err: err.join('\n') };
  };

  it('adds a bearer token for an MCP server from a variable, and prints no secret', async () => {
    const res = await run(['vaults', 'credentials', 'add', 'vlt_1', '--mcp-server', 'https://mcp.example.com/', '--secret-env', 'GH_TOKEN'], { GH_TOKEN: 'ghp_abc' });
    expect(res.code).toBe(ExitCode.ok);
    expect(seen.at(-1)).toEqual({ method: 'POST', path: '/v1/vaults/vlt_1/credentials', body: { auth: { type: 'static_bearer', mcp_server_url: 'https://mcp.example.com/', token: 'ghp_abc' } } });
    expect(res.out).not.toContain('ghp_abc');
    expect(res.out).toMatch(/for:\s+https:\/\/mcp\.example\.com\//);
  });

  it('adds a variable for some hosts', async () => {
    await run(['vaults', 'credentials', 'add', 'vlt_1', '--variable', 'DEPLOY_TOKEN', '--host', 'deploy.example.com', '--host', '*.example.org', '--secret-env', 'T'], { T: 'dpl' });
    expect(seen.at(-1)?.body).toEqual({ auth: { type: 'environment_variable', secret_name: 'DEPLOY_TOKEN', secret_value: 'dpl', networking: { type: 'limited', allowed_hosts: ['deploy.example.com', '*.example.org'] } } });
  });

  it('refuses a secret it would have to take from the command line, and an unset variable, before any request', async () => {
    const before = seen.length;
    expect((await run(['vaults', 'credentials', 'add', 'vlt_1', '--mcp-server', 'https://m.example.com/'])).err).toBe('error: give the secret with --secret-stdin or --secret-env NAME (never as an argument)');
    expect(await run(['vaults', 'credentials', 'add', 'vlt_1', '--mcp-server', 'https://m.example.com/', '--secret-env', 'NOPE'])).toMatchObject({ code: ExitCode.usage, err: 'error: --secret-env NOPE: the variable is not set' });
    expect(seen).toHaveLength(before);
  });

  it('rotates a secret in the field of the credential’s own type', async () => {
    await run(['vaults', 'credentials', 'rotate', 'vlt_1', 'vcrd_1', '--secret-env', 'N'], { N: 'ghp_new' });
    expect(seen.at(-1)).toEqual({ method: 'POST', path: '/v1/vaults/vlt_1/credentials/vcrd_1', body: { auth: { type: 'static_bearer', token: 'ghp_new' } } });
  });

  it('adds an mcp_oauth access token with its expiry, and a variable put into bodies; shows the expiry and where a secret goes', async () => {
    const oauth = await run(['vaults', 'credentials', 'add', 'vlt_1', '--mcp-server', 'https://mcp.example.com/', '--oauth', '--expires-at', '2026-06-01T12:00:00Z', '--secret-env', 'AT'], { AT: 'at_abc' });
    expect(oauth.code).toBe(ExitCode.ok);
    expect(seen.at(-1)?.body).toEqual({ auth: { type: 'mcp_oauth', mcp_server_url: 'https://mcp.example.com/', access_token: 'at_abc', expires_at: '2026-06-01T12:00:00Z' } });
    await run(['vaults', 'credentials', 'add', 'vlt_1', '--variable', 'DEPLOY_TOKEN', '--inject', 'header,body', '--secret-env', 'T'], { T: 'dpl' });
    expect(seen.at(-1)?.body).toEqual({ auth: { type: 'environment_variable', secret_name: 'DEPLOY_TOKEN', secret_value: 'dpl', networking: { type: 'unrestricted' }, injection_location: { header: true, body: true } } });
    expect((await run(['vaults', 'credentials', 'update', 'vlt_1', 'vcrd_oauth', '--name', 'gh'])).out).toMatch(/expires:\s+2026-06-01T12:00:00Z/);
    expect((await run(['vaults', 'credentials', 'update', 'vlt_1', 'vcrd_var', '--name', 'gh'])).out).toMatch(/injected into:\s+header\n/);
  });

  it('rotates an OAuth token with its new expiry, and updates a credential without a new secret', async () => {
    await run(['vaults', 'credentials', 'rotate', 'vlt_1', 'vcrd_oauth', '--secret-env', 'N', '--expires-at', '2026-07-01T00:00:00Z'], { N: 'at_new' });
    expect(seen.at(-1)).toEqual({ method: 'POST', path: '/v1/vaults/vlt_1/credentials/vcrd_oauth', body: { auth: { type: 'mcp_oauth', access_token: 'at_new', expires_at: '2026-07-01T00:00:00Z' } } });
    await run(['vaults', 'credentials', 'update', 'vlt_1', 'vcrd_oauth', '--expires-at', 'none']);
    expect(seen.at(-1)?.body).toEqual({ auth: { type: 'mcp_oauth', expires_at: null } });
    await run(['vaults', 'credentials', 'update', 'vlt_1', 'vcrd_var', '--host', 'deploy.example.com', '--inject', 'body', '--name', 'deploy']);
    expect(seen.at(-1)?.body).toEqual({ auth: { type: 'environment_variable', networking: { type: 'limited', allowed_hosts: ['deploy.example.com'] }, injection_location: { header: false, body: true } }, display_name: 'deploy' });
    await run(['vaults', 'credentials', 'update', 'vlt_1', 'vcrd_var', '--any-host', '--secret-env', 'S'], { S: 'dpl_2' });
    expect(seen.at(-1)?.body).toEqual({ auth: { type: 'environment_variable', secret_value: 'dpl_2', networking: { type: 'unrestricted' } } });
  });

  it.each([
    [['vaults', 'credentials', 'update', 'vlt_1', 'vcrd_1'], 'nothing to update'],
    [['vaults', 'credentials', 'update', 'vlt_1', 'vcrd_1', '--expires-at', '2026-07-01T00:00:00Z'], '--expires-at applies to mcp_oauth credentials; this one is static_bearer'],
    [['vaults', 'credentials', 'update', 'vlt_1', 'vcrd_oauth', '--expires-at', 'tomorrow'], '--expires-at must be an RFC 3339 time'],
    [['vaults', 'credentials', 'update', 'vlt_1', 'vcrd_oauth', '--host', 'x.example.com'], '--host, --any-host and --inject apply to environment_variable credentials'],
    [['vaults', 'credentials', 'update', 'vlt_1', 'vcrd_var', '--inject', 'url'], '--inject must be header, body or header,body'],
    [['vaults', 'credentials', 'add', 'vlt_1', '--mcp-server', 'https://m.example.com/', '--expires-at', '2026-07-01T00:00:00Z', '--secret-env', 'S'], '--expires-at goes with --mcp-server URL --oauth'],
  ])('%j is a usage error that says why', async (argv, message) => {
    const res = await run(argv, { S: 'x' });
    expect([res.code, res.err]).toEqual([ExitCode.usage, expect.stringContaining(message)]);
  });

  it('validate prints the verdict, the last refresh and what was checked', async () => {
    const res = await run(['vaults', 'credentials', 'validate', 'vlt_1', 'vcrd_oauth']);
    expect(seen.at(-1)).toMatchObject({ method: 'POST', path: '/v1/vaults/vlt_1/credentials/vcrd_oauth/mcp_oauth_validate' });
    expect(res.out).toMatch(/status:\s+invalid\nrefresh:\s+no_refresh_token\ndetail:\s+the access token expired at 2020-01-01T00:00:00Z/);
    expect((await run(['vaults', 'credentials', 'validate', 'vlt_1', 'vcrd_refresh'])).out).toMatch(/refresh:\s+failed \(HTTP 400\)/);
  });

  it('adds an OAuth token Berth refreshes: the refresh token and client secret from variables only; shows how it refreshes and where that stands', async () => {
    const res = await run(
      [
        'vaults', 'credentials', 'add', 'vlt_1', '--mcp-server', 'https://mcp.example.com/', '--oauth', '--expires-at', '2026-06-01T12:00:00Z', '--secret-env', 'AT',
        '--refresh-token-endpoint', 'https://auth.example.com/token', '--refresh-client-id', 'berth', '--refresh-token-env', 'RT',
        '--refresh-client-auth', 'client_secret_basic', '--refresh-client-secret-env', 'CS', '--refresh-scope', 'mcp',
      ],
      { AT: 'at_abc', RT: 'rt_abc', CS: 'cs_abc' },
    );
    expect(res.code).toBe(ExitCode.ok);
    expect(seen.at(-1)?.body).toEqual({
      auth: {
        type: 'mcp_oauth',
        mcp_server_url: 'https://mcp.example.com/',
        access_token: 'at_abc',
        expires_at: '2026-06-01T12:00:00Z',
        refresh: { token_endpoint: 'https://auth.example.com/token', client_id: 'berth', refresh_token: 'rt_abc', token_endpoint_auth: { type: 'client_secret_basic', client_secret: 'cs_abc' }, scope: 'mcp' },
      },
    });
    expect(res.out).not.toMatch(/at_abc|rt_abc|cs_abc/);
    const shown = await run(['vaults', 'credentials', 'update', 'vlt_1', 'vcrd_refresh', '--name', 'gh']);
    expect(shown.out).toMatch(/refresh:\s+https:\/\/auth\.example\.com\/token as berth \(client_secret_basic\): failed; last error: the token endpoint answered 400 invalid_grant/);
    expect((await run(['vaults', 'credentials', 'update', 'vlt_1', 'vcrd_oauth', '--name', 'gh'])).out).toMatch(/refresh:\s+none \(Berth does not refresh this token\)/);
  });

  it('updates the refresh secrets from variables (the client auth method stays the credential’s), and clears the scope', async () => {
    await run(['vaults', 'credentials', 'update', 'vlt_1', 'vcrd_refresh', '--refresh-token-env', 'RT', '--refresh-client-secret-env', 'CS', '--refresh-scope', ''], { RT: 'rt_new', CS: 'cs_new' });
    expect(seen.at(-1)?.body).toEqual({ auth: { type: 'mcp_oauth', refresh: { refresh_token: 'rt_new', scope: '', token_endpoint_auth: { type: 'client_secret_basic', client_secret: 'cs_new' } } } });
    await run(['vaults', 'credentials', 'rotate', 'vlt_1', 'vcrd_refresh', '--secret-env', 'AT', '--expires-at', '2026-07-01T00:00:00Z', '--refresh-token-env', 'RT'], { AT: 'at_new', RT: 'rt_newer' });
    expect(seen.at(-1)?.body).toEqual({ auth: { type: 'mcp_oauth', access_token: 'at_new', expires_at: '2026-07-01T00:00:00Z', refresh: { refresh_token: 'rt_newer' } } });
  });

  it.each([
    [['vaults', 'credentials', 'add', 'vlt_1', '--mcp-server', 'https://m.example.com/', '--refresh-token-endpoint', 'https://a.example.com/t', '--secret-env', 'S'], '--refresh-* go with --mcp-server URL --oauth'],
    [['vaults', 'credentials', 'add', 'vlt_1', '--mcp-server', 'https://m.example.com/', '--oauth', '--refresh-client-id', 'c', '--secret-env', 'S'], 'a refresh needs --refresh-token-endpoint URL, --refresh-client-id ID and --refresh-token-env VAR'],
    [['vaults', 'credentials', 'add', 'vlt_1', '--mcp-server', 'https://m.example.com/', '--oauth', '--refresh-token-endpoint', 'https://a.example.com/t', '--refresh-client-id', 'c', '--secret-env', 'S'], 'give the refresh token with --refresh-token-env VAR'],
    [['vaults', 'credentials', 'add', 'vlt_1', '--mcp-server', 'https://m.example.com/', '--oauth', '--refresh-token-endpoint', 'https://a.example.com/t', '--refresh-client-id', 'c', '--refresh-token-env', 'NOPE', '--secret-env', 'S'], '--refresh-token-env NOPE: the variable is not set'],
    [['vaults', 'credentials', 'add', 'vlt_1', '--mcp-server', 'https://m.example.com/', '--oauth', '--refresh-token-endpoint', 'https://a.example.com/t', '--refresh-client-id', 'c', '--refresh-token-env', 'S', '--refresh-client-auth', 'client_secret_post', '--secret-env', 'S'], '--refresh-client-auth client_secret_post needs the client secret'],
    [['vaults', 'credentials', 'add', 'vlt_1', '--mcp-server', 'https://m.example.com/', '--oauth', '--refresh-token-endpoint', 'https://a.example.com/t', '--refresh-client-id', 'c', '--refresh-token-env', 'S', '--refresh-client-auth', 'jwt', '--secret-env', 'S'], '--refresh-client-auth must be none, client_secret_basic, client_secret_post'],
    [['vaults', 'credentials', 'update', 'vlt_1', 'vcrd_oauth', '--refresh-token-env', 'S'], '--refresh-* apply to an mcp_oauth credential created with a refresh'],
    [['vaults', 'credentials', 'update', 'vlt_1', 'vcrd_1', '--refresh-scope', 'x'], '--refresh-* apply to mcp_oauth credentials; this one is static_bearer'],
  ])('%j is a usage error that says why, before any write', async (argv, message) => {
    const writes = seen.filter((r) => r.method === 'POST').length;
    const res = await run(argv, { S: 'x' });
    expect([res.code, res.err]).toEqual([ExitCode.usage, expect.stringContaining(message)]);
    expect(seen.filter((r) => r.method === 'POST').length).toBe(writes);
  });

  it('sessions create --vault pins the vaults the egress injects from', async () => {
    const res = await run(['sessions', 'create', '--agent', 'agent_1', '--env', 'env_1', '--vault', 'vlt_1', '--vault', 'vlt_2']);
    expect(res.code).toBe(ExitCode.ok);
    expect(seen.at(-1)).toMatchObject({ method: 'POST', path: '/v1/sessions', body: { agent: 'agent_1', environment_id: 'env_1', vault_ids: ['vlt_1', 'vlt_2'] } });
  });
});
