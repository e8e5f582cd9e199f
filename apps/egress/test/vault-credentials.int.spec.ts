import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { recordingLogger, ScriptedUpstreamProxy, TestMcpServer } from '@berth/testing';
import { connectVia, EgressHarness, viaSocket } from './egress-harness';

jest.setTimeout(30_000);

/** A server that answers 200 to anything and records the Authorization header of each path asked for. */
class AuthorizationRecorder {
  readonly seen: { path: string; authorization: string | null }[] = [];
  private readonly server: Server = createServer((req: IncomingMessage, res) => {
    this.seen.push({ path: req.url ?? '', authorization: req.headers.authorization ?? null });
    req.resume();
    res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
  });

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', () => resolve()));
    return this;
  }

  get origin(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

const TOKEN = 'tok-vault-mcp-4c1f9b2e7d';
const MCP_URL = 'http://mcp.vault.test/mcp';
const initialize = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
const mcpPost = (socket: string, headers: Record<string, string> = {}) =>
  viaSocket(socket, MCP_URL, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body: initialize });

describe('vault credentials injected by the egress', () => {
  let mcp: TestMcpServer;
  let recorder: AuthorizationRecorder;
  let upstream: ScriptedUpstreamProxy;
  let egress: EgressHarness;
  const logged = recordingLogger();

  beforeAll(async () => {
    mcp = await new TestMcpServer({ bearerToken: TOKEN }).start();
    recorder = await new AuthorizationRecorder().start();
    upstream = await new ScriptedUpstreamProxy({ 'mcp.vault.test': { origin: new URL(mcp.url).origin }, 'echo.vault.test': { origin: recorder.origin } }).start();
    egress = await new EgressHarness({ model: { baseUrl: null, trustedHosts: [] }, keys: {}, upstreamProxy: upstream.url, log: logged.log }).start();
  });
  afterAll(async () => {
    await egress?.stop();
    await Promise.all([mcp?.close(), recorder?.close(), upstream?.close()]);
  });

  it("adds the session's bearer token to its MCP server's requests, in place of whatever the sandbox sent; the MCP server accepts it", async () => {
    const { vault } = await egress.vault(MCP_URL, TOKEN);
    const { socket } = await egress.sandbox({ type: 'cloud' }, {}, 'claude-code', [vault.id]);
    const before = mcp.authorizations.length;

    const plain = await mcpPost(socket);
    const forged = await mcpPost(socket, { authorization: 'Bearer forged-by-the-agent' });

    expect(plain.status).toBe(200);
    expect(JSON.parse(plain.body)).toMatchObject({ jsonrpc: '2.0', id: 1, result: { serverInfo: { name: 'berth-test-mcp' } } });
    expect(forged.status).toBe(200);
    expect(mcp.authorizations.slice(before)).toEqual([`Bearer ${TOKEN}`, `Bearer ${TOKEN}`]);
    expect(plain.body + forged.body).not.toContain(TOKEN);
  });

  it('adds nothing for a session without the vault, even of the same owner', async () => {
    await egress.vault(MCP_URL, TOKEN);
    const { socket } = await egress.sandbox({ type: 'cloud' });
    const before = mcp.authorizations.length;
    expect((await mcpPost(socket)).status).toBe(401);
    expect(mcp.authorizations.slice(before)).toEqual([null]);
  });

  it("never injects another owner's vault, whatever ids the session names", async () => {
    const { vault } = await egress.vault(MCP_URL, TOKEN, 'owner_other');
    const { socket } = await egress.sandbox({ type: 'cloud' }, {}, 'claude-code', [vault.id]);
    expect((await mcpPost(socket)).status).toBe(401);
  });

  it('sends the token to its MCP server URL only: not to another path of the host, another host, or into a CONNECT tunnel', async () => {
    const { vault } = await egress.vault('http://echo.vault.test/mcp', TOKEN);
    const { socket } = await egress.sandbox({ type: 'cloud' }, {}, 'claude-code', [vault.id]);
    const from = recorder.seen.length;

    for (const url of ['http://echo.vault.test/mcp/messages?x=1', 'http://echo.vault.test/admin', 'http://echo.vault.test/mcp/../admin', 'http://echo.vault.test/mcpx']) {
      expect((await viaSocket(socket, url)).status).toBe(200);
    }
    expect((await connectVia(socket, 'echo.vault.test:80')).tunnelled).toContain('ok');

    expect(recorder.seen.slice(from)).toEqual([
      { path: '/mcp/messages?x=1', authorization: `Bearer ${TOKEN}` },
      { path: '/admin', authorization: null },
      { path: '/admin', authorization: null },
      { path: '/mcpx', authorization: null },
      { path: '/through', authorization: null },
    ]);
  });

  it('stops injecting at once when the credential or the vault is archived, or the credential deleted', async () => {
    const archive = async (what: 'credential' | 'vault' | 'delete') => {
      const { vault, credential } = await egress.vault(MCP_URL, TOKEN);
      const { socket } = await egress.sandbox({ type: 'cloud' }, {}, 'claude-code', [vault.id]);
      expect((await mcpPost(socket)).status).toBe(200);
      const now = new Date().toISOString();
      if (what === 'credential') await egress.store.vaults.putCredential({ ...credential, archived_at: now });
      if (what === 'vault') await egress.store.vaults.put({ ...vault, archived_at: now });
      if (what === 'delete') await egress.store.vaults.deleteCredential(egress.owner, vault.id, credential.id);
      return (await mcpPost(socket)).status;
    };
    expect(await archive('credential')).toBe(401);
    expect(await archive('vault')).toBe(401);
    expect(await archive('delete')).toBe(401);
  });

  it('leaves out a credential that does not open (tampered with, or sealed under a key the egress lacks), logging its id and never a secret', async () => {
    const { vault, credential } = await egress.vault(MCP_URL, TOKEN);
    await egress.store.vaults.putCredential({ ...credential, secret: { ...credential.secret, key_id: 'gone' } });
    const { socket } = await egress.sandbox({ type: 'cloud' }, {}, 'claude-code', [vault.id]);

    expect((await mcpPost(socket)).status).toBe(401);
    expect(logged.lines).toContainEqual(expect.objectContaining({ level: 'warn', fields: expect.objectContaining({ credential_id: credential.id, code: 'SECRET_KEY_UNKNOWN' }) }));
    expect(JSON.stringify(logged.lines)).not.toContain(TOKEN);
  });
});
