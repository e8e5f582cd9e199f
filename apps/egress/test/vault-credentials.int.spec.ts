import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent, createServer, request, type IncomingMessage, type RequestListener, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { rootCertificates } from 'node:tls';
import { credentialPlaceholder } from '@berth/contracts';
import { recordingLogger, ScriptedUpstreamProxy, TestCertificates, TestMcpServer, waitUntil } from '@berth/testing';
import { connectVia, EgressHarness, httpsVia, viaSocket } from './egress-harness';

jest.setTimeout(30_000);

/** A server that answers 200 to anything and records the Authorization header of each path asked for (HTTPS with `tls`). */
class AuthorizationRecorder {
  readonly seen: { path: string; authorization: string | null; host: string | null }[] = [];
  /** The body of each request, in the same order. */
  readonly bodies: string[] = [];
  private readonly server: Server;

  constructor(tls?: Readonly<{ keyPem: string; certPem: string }>) {
    const handler: RequestListener = (req: IncomingMessage, res) => {
      this.seen.push({ path: req.url ?? '', authorization: req.headers.authorization ?? null, host: req.headers.host ?? null });
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => {
        this.bodies.push(body);
        res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
      });
    };
    this.server = tls === undefined ? createServer(handler) : createHttpsServer({ key: tls.keyPem, cert: tls.certPem }, handler);
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', () => resolve()));
    return this;
  }

  get origin(): string {
    return `http://${this.address}`;
  }

  get address(): string {
    return `127.0.0.1:${(this.server.address() as AddressInfo).port}`;
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
      { path: '/mcp/messages?x=1', authorization: `Bearer ${TOKEN}`, host: 'echo.vault.test' },
      { path: '/admin', authorization: null, host: 'echo.vault.test' },
      { path: '/admin', authorization: null, host: 'echo.vault.test' },
      { path: '/mcpx', authorization: null, host: 'echo.vault.test' },
      { path: '/through', authorization: null, host: 'echo.vault.test' },
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

  it('refuses a request an mcp_oauth token past its expires_at covers, sends it nothing, and tells the session; a token still valid is sent', async () => {
    const expired = await egress.vault(MCP_URL, TOKEN, egress.owner, '2020-01-01T00:00:00.000Z');
    const { socket, sessionId } = await egress.sandbox({ type: 'cloud' }, {}, 'claude-code', [expired.vault.id]);
    const before = mcp.authorizations.length;

    const refused = await mcpPost(socket);
    expect([refused.status, refused.headers['x-berth-egress-denied']]).toEqual([403, 'vault_credential_expired']);
    expect(refused.body).toContain(`vault credential ${expired.credential.id} (vault ${expired.vault.id}) for ${MCP_URL} expired at 2020-01-01T00:00:00.000Z`);
    expect(mcp.authorizations.length).toBe(before);
    const reported = egress.bus.dispatched.filter((c) => c.type === 'ReportEgressDenied' && c.meta.session_id === sessionId);
    expect(reported.map((c) => c.data)).toEqual([expect.objectContaining({ host: 'mcp.vault.test', port: 80, reason: 'vault_credential_expired', setting: null })]);
    expect(refused.body + JSON.stringify(reported) + JSON.stringify(logged.lines)).not.toContain(TOKEN);

    const valid = await egress.vault(MCP_URL, TOKEN, egress.owner, new Date(Date.now() + 3_600_000).toISOString());
    const fresh = await egress.sandbox({ type: 'cloud' }, {}, 'claude-code', [valid.vault.id]);
    expect((await mcpPost(fresh.socket)).status).toBe(200);
    expect(mcp.authorizations.at(-1)).toBe(`Bearer ${TOKEN}`);
  });

  it('reads a token that looks expired again from the store before refusing it: a refreshed one is sent at once, whatever the context cache holds', async () => {
    const cached = await new EgressHarness({ model: { baseUrl: null, trustedHosts: [] }, keys: {}, upstreamProxy: upstream.url, contextCacheMs: 60_000 }).start();
    try {
      const { vault, credential } = await cached.vault('http://echo.vault.test/mcp', 'tok-lapsed', cached.owner, '2020-01-01T00:00:00.000Z');
      const { socket } = await cached.sandbox({ type: 'cloud' }, {}, 'claude-code', [vault.id]);
      const from = recorder.seen.length;
      expect((await viaSocket(socket, 'http://echo.vault.test/mcp')).status).toBe(403);
      // What the refresher writes: a new token, a new expiry, one version more.
      const fresh = { ...credential, auth: { ...credential.auth, expires_at: new Date(Date.now() + 3_600_000).toISOString() }, secret: cached.secrets.seal(JSON.stringify({ value: 'tok-refreshed' }), credential.id), version: 1 };
      await cached.store.vaults.updateCredential(fresh, 0);
      expect((await viaSocket(socket, 'http://echo.vault.test/mcp')).status).toBe(200);
      expect(recorder.seen.slice(from).map((r) => r.authorization)).toEqual(['Bearer tok-refreshed']);
    } finally {
      await cached.stop();
    }
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

describe('vault credentials for https:// servers: the egress terminates TLS for exactly their hosts', () => {
  const HOST = 'mcp.tls.test';
  const TLS_URL = `https://${HOST}/mcp`;
  let certs: TestCertificates;
  let mcp: TestMcpServer;
  let impostor: TestMcpServer;
  let recorder: AuthorizationRecorder;
  let upstream: ScriptedUpstreamProxy;
  let egress: EgressHarness;
  const logged = recordingLogger();

  beforeAll(async () => {
    certs = await TestCertificates.create(HOST);
    const echo = await TestCertificates.create('echo.tls.test');
    mcp = await new TestMcpServer({ bearerToken: TOKEN, tls: certs.server }).start();
    // Presents a certificate for the host from a CA the egress does not trust: a man in the middle.
    impostor = await new TestMcpServer({ tls: await TestCertificates.untrusted('bad.tls.test') }).start();
    recorder = await new AuthorizationRecorder(echo.server).start();
    const tcp = (url: string) => ({ tcp: new URL(url).host });
    upstream = await new ScriptedUpstreamProxy({
      [HOST]: tcp(mcp.url),
      // The same server under a name no credential is bound to: its tunnel stays opaque.
      'opaque.tls.test': tcp(mcp.url),
      'bad.tls.test': tcp(impostor.url),
      'echo.tls.test': { tcp: recorder.address },
      // Nothing listens there.
      'down.tls.test': { tcp: '127.0.0.1:9' },
    }).start();
    egress = await new EgressHarness({ model: { baseUrl: null, trustedHosts: [] }, keys: {}, upstreamProxy: upstream.url, upstreamCa: [certs.caPem, echo.caPem], log: logged.log }).start();
    echo.remove();
  });
  afterAll(async () => {
    await egress?.stop();
    await Promise.all([mcp?.close(), impostor?.close(), recorder?.close(), upstream?.close()]);
    certs?.remove();
  });

  it("adds the session's token inside the TLS tunnel to its server, which accepts it; the sandbox sees a one-day certificate of the egress's CA for that host", async () => {
    const { vault } = await egress.vault(TLS_URL, TOKEN);
    const { socket } = await egress.sandbox({ type: 'cloud' }, {}, 'claude-code', [vault.id]);
    const before = mcp.authorizations.length;

    const plain = await httpsVia(socket, HOST, 443, '/mcp', { ca: egress.ca.certPem, ...initializeRequest() });
    const forged = await httpsVia(socket, HOST, 443, '/mcp', { ca: egress.ca.certPem, ...initializeRequest({ authorization: 'Bearer forged-by-the-agent' }) });

    expect(plain.status).toBe(200);
    expect(JSON.parse(plain.body)).toMatchObject({ jsonrpc: '2.0', id: 1, result: { serverInfo: { name: 'berth-test-mcp' } } });
    expect(forged.status).toBe(200);
    expect(mcp.authorizations.slice(before)).toEqual([`Bearer ${TOKEN}`, `Bearer ${TOKEN}`]);
    expect(plain.body + forged.body).not.toContain(TOKEN);
    const seen = new X509Certificate(plain.certificate);
    expect(seen.issuer).toBe(new X509Certificate(egress.ca.certPem).subject);
    expect(seen.subjectAltName).toBe(`DNS:${HOST}`);
    expect(seen.ca).toBe(false);
    expect(Date.parse(seen.validTo) - Date.parse(seen.validFrom)).toBeLessThanOrEqual(24 * 3600 * 1000);
    expect(JSON.stringify(logged.lines)).not.toContain(TOKEN);
  });

  it('inside the TLS it terminates, refuses a request an expired mcp_oauth token covers and tells the session; the server sees nothing', async () => {
    const { vault, credential } = await egress.vault(TLS_URL, TOKEN, egress.owner, '2020-01-01T00:00:00.000Z');
    const { socket, sessionId } = await egress.sandbox({ type: 'cloud' }, {}, 'claude-code', [vault.id]);
    const before = mcp.authorizations.length;
    const answer = await httpsVia(socket, HOST, 443, '/mcp', { ca: egress.ca.certPem, ...initializeRequest() });
    expect([answer.status, answer.headers['x-berth-egress-denied']]).toEqual([403, 'vault_credential_expired']);
    expect(answer.body).toContain(`vault credential ${credential.id} (vault ${vault.id}) for ${TLS_URL} expired at`);
    expect(mcp.authorizations.length).toBe(before);
    const reported = egress.bus.dispatched.filter((c) => c.type === 'ReportEgressDenied' && c.meta.session_id === sessionId);
    expect(reported.map((c) => c.data)).toEqual([expect.objectContaining({ host: HOST, port: 443, reason: 'vault_credential_expired' })]);
    expect(answer.body + JSON.stringify(reported)).not.toContain(TOKEN);
  });

  it('a token replaced while a terminated tunnel stays open (a refresh mid-session) is what the next request in it carries', async () => {
    const { vault, credential } = await egress.vault('https://echo.tls.test/mcp', 'tok-before', egress.owner, new Date(Date.now() + 3_600_000).toISOString());
    const { socket } = await egress.sandbox({ type: 'cloud' }, {}, 'claude-code', [vault.id]);
    const tls = await openTunnel(socket, 'echo.tls.test', egress.ca.certPem);
    let connections = 0;
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    (agent as unknown as { createConnection: () => TLSSocket }).createConnection = () => (connections++, tls);
    const from = recorder.seen.length;
    expect(await getVia(agent, 'echo.tls.test', '/mcp')).toBe(200);
    await egress.store.vaults.updateCredential({ ...credential, secret: egress.secrets.seal(JSON.stringify({ value: 'tok-after' }), credential.id), version: 1 }, 0);
    expect(await getVia(agent, 'echo.tls.test', '/mcp')).toBe(200);
    agent.destroy();
    expect(connections).toBe(1);
    expect(recorder.seen.slice(from).map((r) => r.authorization)).toEqual(['Bearer tok-before', 'Bearer tok-after']);
  });

  it('puts the CA certificate (alone, and after the public roots) beside the socket, never its key', async () => {
    const { socket } = await egress.sandbox({ type: 'cloud' });
    const dir = dirname(socket);
    expect(readFileSync(join(dir, 'ca.pem'), 'utf8')).toBe(egress.ca.certPem);
    const bundle = readFileSync(join(dir, 'ca-bundle.pem'), 'utf8');
    expect(bundle.startsWith(rootCertificates[0] as string)).toBe(true);
    expect(bundle).toContain(egress.ca.certPem.trim());
    expect(bundle + readFileSync(join(dir, 'ca.pem'), 'utf8')).not.toContain('PRIVATE KEY');
  });

  it('a client that does not trust the CA fails the handshake (logged, without the token), and nothing reaches the server', async () => {
    const { vault } = await egress.vault(TLS_URL, TOKEN);
    const { socket } = await egress.sandbox({ type: 'cloud' }, {}, 'claude-code', [vault.id]);
    const before = mcp.authorizations.length;
    await expect(httpsVia(socket, HOST, 443, '/mcp', { ca: certs.caPem, ...initializeRequest() })).rejects.toThrow(/certificate/);
    expect(mcp.authorizations.length).toBe(before);
    await waitUntil(() => logged.lines.some((l) => l.message.includes('TLS handshake with a sandbox client failed')), { what: 'the failed handshake logged' });
    expect(JSON.stringify(logged.lines)).not.toContain(TOKEN);
  });

  it("sends the token under the credential's path only, to the CONNECT's host whatever the Host header says", async () => {
    const { vault } = await egress.vault('https://echo.tls.test/mcp', TOKEN);
    const { socket } = await egress.sandbox({ type: 'cloud' }, {}, 'claude-code', [vault.id]);
    const from = recorder.seen.length;
    for (const path of ['/mcp/messages?x=1', '/admin', '/mcp/../admin', '/mcpx']) {
      expect((await httpsVia(socket, 'echo.tls.test', 443, path, { ca: egress.ca.certPem, headers: { host: 'elsewhere.test' } })).status).toBe(200);
    }
    expect(recorder.seen.slice(from)).toEqual([
      { path: '/mcp/messages?x=1', authorization: `Bearer ${TOKEN}`, host: 'echo.tls.test' },
      { path: '/admin', authorization: null, host: 'echo.tls.test' },
      { path: '/admin', authorization: null, host: 'echo.tls.test' },
      { path: '/mcpx', authorization: null, host: 'echo.tls.test' },
    ]);
  });

  it('leaves every other tunnel opaque: another host, a session without the vault, an http:// credential for the host', async () => {
    const { vault } = await egress.vault(TLS_URL, TOKEN);
    const withVault = await egress.sandbox({ type: 'cloud' }, {}, 'claude-code', [vault.id]);
    const without = await egress.sandbox({ type: 'cloud' });
    const plainCredential = await egress.vault(`http://${HOST}/mcp`, TOKEN);
    const withPlain = await egress.sandbox({ type: 'cloud' }, {}, 'claude-code', [plainCredential.vault.id]);
    const before = mcp.authorizations.length;
    for (const [socket, host] of [[withVault.socket, 'opaque.tls.test'], [without.socket, HOST], [withPlain.socket, HOST]] as const) {
      // The client trusts the upstream's own CA: end-to-end TLS with the real server, which refuses it without the token.
      const answer = await httpsVia(socket, host, 443, '/mcp', { ca: certs.caPem, servername: HOST, ...initializeRequest() });
      expect([host, answer.status, new X509Certificate(answer.certificate).issuer]).toEqual([host, 401, new X509Certificate(certs.caPem).subject]);
    }
    expect(mcp.authorizations.slice(before)).toEqual([null, null, null]);
  });

  it("refuses an upstream whose certificate does not verify for the host, and one that cannot be reached: a 502 saying so, no token sent", async () => {
    const bad = await egress.vault('https://bad.tls.test/mcp', TOKEN);
    const down = await egress.vault('https://down.tls.test/mcp', TOKEN);
    const { socket } = await egress.sandbox({ type: 'cloud' }, {}, 'claude-code', [bad.vault.id, down.vault.id]);

    const impostorAnswer = await httpsVia(socket, 'bad.tls.test', 443, '/mcp', { ca: egress.ca.certPem, ...initializeRequest() });
    expect(impostorAnswer.status).toBe(502);
    expect(impostorAnswer.body).toMatch(/^Berth egress could not reach https:\/\/bad\.tls\.test: its certificate does not verify for this host/);
    expect(impostor.authorizations).toEqual([]);

    const downAnswer = await httpsVia(socket, 'down.tls.test', 443, '/mcp', { ca: egress.ca.certPem, ...initializeRequest() });
    expect(downAnswer.status).toBe(502);
    expect(downAnswer.body).toMatch(/^Berth egress could not reach https:\/\/down\.tls\.test: /);
    expect(impostorAnswer.body + downAnswer.body + JSON.stringify(logged.lines)).not.toContain(TOKEN);
  });

  it('still refuses by policy before terminating: a credential does not open a host the environment does not allow', async () => {
    const { vault } = await egress.vault(TLS_URL, TOKEN);
    const { socket } = await egress.sandbox({ type: 'cloud', networking: { type: 'limited', allowed_hosts: ['other.test'] } }, {}, 'claude-code', [vault.id]);
    const answer = await connectVia(socket, `${HOST}:443`);
    expect(answer.status).toBe(403);
    expect(answer.headers['x-berth-egress-denied']).toBe('host_not_allowed');
  });
});

describe('environment_variable credentials: the secret in place of its placeholder, in headers to the credential\'s hosts, over HTTP and HTTPS', () => {
  const SECRET = 'sk-variable-secret-7d2e91';
  let certs: TestCertificates;
  let plain: AuthorizationRecorder;
  let secure: AuthorizationRecorder;
  let upstream: ScriptedUpstreamProxy;
  let egress: EgressHarness;
  const logged = recordingLogger();

  beforeAll(async () => {
    certs = await TestCertificates.create('api.tls.test');
    plain = await new AuthorizationRecorder().start();
    secure = await new AuthorizationRecorder(certs.server).start();
    upstream = await new ScriptedUpstreamProxy({
      'api.plain.test': { origin: plain.origin },
      'other.plain.test': { origin: plain.origin },
      'api.tls.test': { tcp: secure.address },
      'other.tls.test': { tcp: secure.address },
    }).start();
    egress = await new EgressHarness({ model: { baseUrl: null, trustedHosts: [] }, keys: {}, upstreamProxy: upstream.url, upstreamCa: [certs.caPem], log: logged.log }).start();
  });
  afterAll(async () => {
    await egress?.stop();
    await Promise.all([plain?.close(), secure?.close(), upstream?.close()]);
    certs?.remove();
  });

  const bearer = (credentialId: string) => ({ authorization: `Bearer ${credentialPlaceholder(credentialId)}` });
  const lastSeen = (recorder: AuthorizationRecorder) => recorder.seen.at(-1)?.authorization ?? null;

  it("replaces the placeholder for the credential's limited hosts only, over plain HTTP and inside the TLS it terminates for them", async () => {
    const { vault, credential } = await egress.variableVault('API_TOKEN', SECRET, { type: 'limited', allowed_hosts: ['api.plain.test', 'api.tls.test'] });
    const { socket } = await egress.sandbox({ type: 'cloud' }, {}, 'claude-code', [vault.id]);
    const placeholder = `Bearer ${credentialPlaceholder(credential.id)}`;

    expect((await viaSocket(socket, 'http://api.plain.test/v1/x', { headers: bearer(credential.id) })).status).toBe(200);
    expect(lastSeen(plain)).toBe(`Bearer ${SECRET}`);
    expect((await viaSocket(socket, 'http://other.plain.test/v1/x', { headers: bearer(credential.id) })).status).toBe(200);
    expect(lastSeen(plain)).toBe(placeholder);

    const terminated = await httpsVia(socket, 'api.tls.test', 443, '/v1/x', { ca: egress.ca.certPem, headers: bearer(credential.id) });
    expect([terminated.status, new X509Certificate(terminated.certificate).issuer]).toEqual([200, new X509Certificate(egress.ca.certPem).subject]);
    expect(lastSeen(secure)).toBe(`Bearer ${SECRET}`);
    // Another host stays an opaque tunnel: the client sees the server's own certificate and the server the placeholder.
    const opaque = await httpsVia(socket, 'other.tls.test', 443, '/v1/x', { ca: certs.caPem, servername: 'api.tls.test', headers: bearer(credential.id) });
    expect([opaque.status, new X509Certificate(opaque.certificate).issuer]).toEqual([200, new X509Certificate(certs.caPem).subject]);
    expect(lastSeen(secure)).toBe(placeholder);
    expect(JSON.stringify(logged.lines) + terminated.body + opaque.body).not.toContain(SECRET);
  });

  it('an unrestricted credential applies to any plain-HTTP host the environment allows, and opens no TLS tunnel by itself', async () => {
    const { vault, credential } = await egress.variableVault('ANY_TOKEN', SECRET, { type: 'unrestricted' });
    const { socket } = await egress.sandbox({ type: 'cloud' }, {}, 'claude-code', [vault.id]);
    expect((await viaSocket(socket, 'http://other.plain.test/', { headers: bearer(credential.id) })).status).toBe(200);
    expect(lastSeen(plain)).toBe(`Bearer ${SECRET}`);
    const opaque = await httpsVia(socket, 'api.tls.test', 443, '/', { ca: certs.caPem, headers: bearer(credential.id) });
    expect(new X509Certificate(opaque.certificate).issuer).toBe(new X509Certificate(certs.caPem).subject);
    expect(lastSeen(secure)).toBe(`Bearer ${credentialPlaceholder(credential.id)}`);
  });

  it('a body credential goes into request bodies (not headers), over HTTP and inside the TLS it terminates; another session\'s placeholder gets nothing', async () => {
    const bodyOnly = await egress.variableVault('BODY_TOKEN', SECRET, { type: 'limited', allowed_hosts: ['api.plain.test', 'api.tls.test'] }, { header: false, body: true });
    const theirs = await egress.variableVault('THEIR_TOKEN', SECRET, { type: 'unrestricted' }, { header: true, body: true });
    const { socket } = await egress.sandbox({ type: 'cloud' }, {}, 'claude-code', [bodyOnly.vault.id]);
    const mine = credentialPlaceholder(bodyOnly.credential.id);
    const body = JSON.stringify({ token: mine, again: mine, other: credentialPlaceholder(theirs.credential.id) });
    const expected = JSON.stringify({ token: SECRET, again: SECRET, other: credentialPlaceholder(theirs.credential.id) });

    expect((await viaSocket(socket, 'http://api.plain.test/', { method: 'POST', headers: { ...bearer(bodyOnly.credential.id), 'content-type': 'application/json' }, body })).status).toBe(200);
    expect([lastSeen(plain), plain.bodies.at(-1)]).toEqual([`Bearer ${mine}`, expected]);
    expect((await viaSocket(socket, 'http://other.plain.test/', { method: 'POST', body })).status).toBe(200);
    expect(plain.bodies.at(-1)).toBe(body);

    const terminated = await httpsVia(socket, 'api.tls.test', 443, '/', { ca: egress.ca.certPem, method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect([terminated.status, secure.bodies.at(-1)]).toEqual([200, expected]);
  });

  it('refuses a body past 8 MiB to a host a body credential covers with a 413 saying so, and streams any size elsewhere', async () => {
    const { vault } = await egress.variableVault('BIG_TOKEN', SECRET, { type: 'limited', allowed_hosts: ['api.plain.test'] }, { header: true, body: true });
    const { socket } = await egress.sandbox({ type: 'cloud' }, {}, 'claude-code', [vault.id]);
    const big = 'x'.repeat(8 * 1024 * 1024 + 1);
    const refused = await viaSocket(socket, 'http://api.plain.test/', { method: 'POST', body: big });
    expect([refused.status, refused.body.trim()]).toEqual([413, 'Berth egress: a request body a vault credential is put in may be at most 8388608 bytes.']);
    expect((await viaSocket(socket, 'http://other.plain.test/', { method: 'POST', body: big })).status).toBe(200);
    expect(plain.bodies.at(-1)?.length).toBe(big.length);
  });
});

/** CONNECT host:443 through a sandbox socket and TLS inside it, trusting only `ca`: one tunnel, for as many requests as a client sends. */
async function openTunnel(socketPath: string, host: string, ca: string): Promise<TLSSocket> {
  const raw = await new Promise<Socket>((resolve, reject) => {
    const req = request({ socketPath, method: 'CONNECT', path: `${host}:443` });
    req.on('connect', (res, socket: Socket) => (res.statusCode === 200 ? resolve(socket) : reject(new Error(`CONNECT answered ${res.statusCode}`))));
    req.on('error', reject);
    req.end();
  });
  return new Promise((resolve, reject) => {
    const tls = tlsConnect({ socket: raw, servername: host, ca: [ca], ALPNProtocols: ['http/1.1'] }, () => resolve(tls));
    tls.once('error', reject);
  });
}

/** A GET through a keep-alive agent (its one connection); the status. */
function getVia(agent: Agent, host: string, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ agent, host, path }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

function initializeRequest(headers: Record<string, string> = {}): { method: string; headers: Record<string, string>; body: string } {
  return { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body: initialize };
}
