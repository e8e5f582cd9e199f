import type { IncomingMessage } from 'node:http';
import { runCli } from '../cli';
import { ExitCode } from '../exit-codes';
import { JournalServer } from '../test-support/journal-server';

// `berth vaults …` against a loopback server playing the API: secrets never taken from arguments.

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
        const credential = { id: 'vcrd_1', vault_id: 'vlt_1', display_name: null, auth: { type: 'static_bearer', mcp_server_url: 'https://mcp.example.com/' }, created_at: 't', archived_at: null };
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

  it('sessions create --vault pins the vaults the egress injects from', async () => {
    const res = await run(['sessions', 'create', '--agent', 'agent_1', '--env', 'env_1', '--vault', 'vlt_1', '--vault', 'vlt_2']);
    expect(res.code).toBe(ExitCode.ok);
    expect(seen.at(-1)).toMatchObject({ method: 'POST', path: '/v1/sessions', body: { agent: 'agent_1', environment_id: 'env_1', vault_ids: ['vlt_1', 'vlt_2'] } });
  });
});
