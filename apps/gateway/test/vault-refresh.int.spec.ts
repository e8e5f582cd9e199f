import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { recordingLogger, ScriptedTokenEndpoint, ScriptedUpstreamProxy, TestMcpServer } from '@berth/testing';
// eslint-disable-next-line @nx/enforce-module-boundaries -- the egress's test harness: a session's requests go out through the real egress
import { EgressHarness, viaSocket } from '../../egress/test/egress-harness';
import { call } from './support/api';
import { startGateway, type GatewayHarness } from './support/gateway-harness';
import { waitFor } from './support/wait-for';

/**
 * OAuth refresh of `mcp_oauth` credentials end to end: the official SDK against a real gateway
 * whose refresher talks to a scripted token endpoint on loopback (rotating refresh tokens, each
 * usable once, checking the client's auth method), the real egress (in-process, on the gateway's
 * store and key ring) in front of an MCP server that accepts only the current access token, and a
 * webhook receiver. Margins are configured so a new credential is due at once; nothing sleeps.
 */

const MINUTE = 60_000;
/** Refreshed once less than 10 minutes remain; retries 50 and 100 ms apart. */
const POLICY = { marginMs: 10 * MINUTE, retryDelaysMs: [50, 100] };
const MCP_URL = 'http://mcp.refresh.test/mcp';
const initialize = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
const mcpPost = (socket: string, url = MCP_URL) => viaSocket(socket, url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: initialize });
const secret = (name: string) => `${name}-${randomBytes(8).toString('hex')}`;
const soon = () => new Date(Date.now() + 5 * MINUTE).toISOString();

type Received = Readonly<{ headers: IncomingHttpHeaders; body: string }>;
type View = { auth: { expires_at?: string | null }; berth: { refresh: { status: string; next_attempt_at: string | null; last_refreshed_at: string | null; last_error: string | null } | null } };

describe('mcp_oauth credentials refreshed by the gateway, used by the egress', () => {
  const logged = recordingLogger();
  const AT0 = secret('at-given');
  const RT0 = secret('rt-given');
  const CLIENT_SECRET = secret('client-secret');
  let gw: GatewayHarness;
  let client: Anthropic;
  let tokens: ScriptedTokenEndpoint;
  let mcp: TestMcpServer;
  let upstream: ScriptedUpstreamProxy;
  let egress: EgressHarness;
  let hooks: Server;
  /** The owner's webhook endpoint, subscribed to vault_credential.refresh_failed, and its signing secret. */
  let hookId: string;
  let signingSecret: string;
  const received: Received[] = [];

  beforeAll(async () => {
    gw = await startGateway({ turnRunner: false, refresher: { policy: POLICY }, log: logged.log });
    client = new Anthropic({ apiKey: gw.keyA, baseURL: gw.url, maxRetries: 0 });
    tokens = await new ScriptedTokenEndpoint({ clientId: 'berth-client', method: 'client_secret_basic', clientSecret: CLIENT_SECRET, refreshToken: RT0, accessToken: AT0, expiresInSeconds: 3600 }).start();
    mcp = await new TestMcpServer({ bearerToken: () => tokens.currentAccessToken }).start();
    const origin = { origin: new URL(mcp.url).origin };
    upstream = await new ScriptedUpstreamProxy({ 'mcp.refresh.test': origin, 'mcp.revoked.test': origin, 'mcp.flaky.test': origin }).start();
    egress = await new EgressHarness({ model: { baseUrl: null, trustedHosts: [] }, keys: {}, upstreamProxy: upstream.url, log: logged.log }, { store: gw.store, secrets: gw.secrets, owner: 'owner_a' }).start();
    hooks = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        received.push({ headers: req.headers, body });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => hooks.listen(0, '127.0.0.1', resolve));
    const hook = await call(gw.url, gw.keyA, 'POST', '/v1/webhooks', { url: `http://127.0.0.1:${(hooks.address() as { port: number }).port}/hooks`, enabled_events: ['vault_credential.refresh_failed'] });
    expect(hook.status).toBe(200);
    hookId = hook.json.id;
    signingSecret = hook.json.signing_secret;
  });
  afterAll(async () => {
    await egress?.stop();
    await gw?.close();
    await Promise.all([tokens?.close(), mcp?.close(), upstream?.close(), new Promise((resolve) => hooks?.close(resolve))]);
  });

  const view = async (vaultId: string, id: string) => (await client.beta.vaults.credentials.retrieve(id, { vault_id: vaultId })) as unknown as View;

  it('refreshes a credential near expiry with the refresh_token grant and its client auth method; the egress sends the new token from the next request on', async () => {
    const vault = await client.beta.vaults.create({ display_name: 'oauth' });
    const held = tokens.hold();
    const credential = await client.beta.vaults.credentials.create(vault.id, {
      auth: {
        type: 'mcp_oauth',
        mcp_server_url: MCP_URL,
        access_token: AT0,
        expires_at: soon(),
        refresh: { token_endpoint: tokens.url, client_id: 'berth-client', refresh_token: RT0, token_endpoint_auth: { type: 'client_secret_basic', client_secret: CLIENT_SECRET }, scope: 'mcp:tools' },
      },
    });
    const { socket } = await egress.sandbox({ type: 'cloud' }, {}, 'claude-code', [vault.id]);

    // The refresher is mid-exchange: the session goes on with the token it was given.
    await held.arrived;
    expect((await mcpPost(socket)).status).toBe(200);
    expect(mcp.authorizations.at(-1)).toBe(`Bearer ${AT0}`);
    const asked = Date.now();
    held.release();
    await waitFor(async () => (await view(vault.id, credential.id)).berth.refresh?.last_refreshed_at != null, 5_000, 'the credential refreshed');

    expect(tokens.requests).toEqual([
      { grantType: 'refresh_token', refreshToken: RT0, method: 'client_secret_basic', clientId: 'berth-client', clientSecret: CLIENT_SECRET, scope: 'mcp:tools', resource: null, contentType: 'application/x-www-form-urlencoded', answered: 200 },
    ]);
    const refreshed = await view(vault.id, credential.id);
    expect(Date.parse(refreshed.auth.expires_at ?? '') - asked).toBeGreaterThan(3_500_000);
    expect(refreshed.berth.refresh).toMatchObject({ status: 'scheduled', last_error: null });
    // Planned again by the lifetime the endpoint gave: 12 minutes (20 % of an hour) before the new expiry.
    expect(Date.parse(refreshed.berth.refresh?.next_attempt_at ?? '')).toBe(Date.parse(refreshed.auth.expires_at ?? '') - 12 * MINUTE);

    // The MCP server now takes only the new token, and the egress sends it.
    const after = await mcpPost(socket);
    expect(after.status).toBe(200);
    expect(tokens.currentAccessToken).not.toBe(AT0);
    expect(mcp.authorizations.at(-1)).toBe(`Bearer ${tokens.currentAccessToken}`);

    // The rotated refresh token is what Berth keeps, sealed; no token or secret is in any answer, event or log line.
    const stored = await gw.store.vaults.getCredential('owner_a', vault.id, credential.id);
    if (!stored?.refresh) throw new Error('credential not stored with its refresh');
    expect(gw.secrets.open(stored.refresh.refresh_token, `${credential.id}:refresh_token`)).toBe(tokens.currentRefreshToken);
    const validation = await client.beta.vaults.credentials.mcpOAuthValidate(credential.id, { vault_id: vault.id });
    expect(validation).toMatchObject({ status: 'unknown', has_refresh_token: true, refresh: { status: 'succeeded', http_response: null } });
    const visible = JSON.stringify([refreshed, validation, stored, after.body, logged.lines, egress.bus.dispatched, (await call(gw.url, gw.keyA, 'GET', `/v1/vaults/${vault.id}/credentials`)).text]);
    for (const value of [AT0, RT0, CLIENT_SECRET, tokens.currentAccessToken, tokens.currentRefreshToken ?? 'none']) expect(visible).not.toContain(value);
    expect(logged.lines).toContainEqual(expect.objectContaining({ message: 'vault credential refreshed', fields: expect.objectContaining({ credential_id: credential.id }) }));
  });

  it('retries a failing token endpoint while the token is valid, sending nothing to webhooks', async () => {
    const RT = secret('rt-flaky');
    const flaky = await new ScriptedTokenEndpoint({ clientId: 'berth-post', method: 'client_secret_post', clientSecret: CLIENT_SECRET, refreshToken: RT, accessToken: AT0 }).start();
    flaky.answerNext({ status: 503, body: { error: 'temporarily_unavailable' } }, { status: 500, body: 'oops' });
    const vault = await client.beta.vaults.create({ display_name: 'flaky' });
    const credential = await client.beta.vaults.credentials.create(vault.id, {
      auth: {
        type: 'mcp_oauth',
        mcp_server_url: 'http://mcp.flaky.test/mcp',
        access_token: AT0,
        expires_at: soon(),
        refresh: { token_endpoint: flaky.url, client_id: 'berth-post', refresh_token: RT, token_endpoint_auth: { type: 'client_secret_post', client_secret: CLIENT_SECRET } },
      },
    });
    await waitFor(async () => (await view(vault.id, credential.id)).berth.refresh?.last_refreshed_at != null, 5_000, 'the credential refreshed after two failures');
    expect(flaky.requests.map((r) => [r.refreshToken === RT, r.method, r.clientSecret === CLIENT_SECRET, r.answered])).toEqual([
      [true, 'client_secret_post', true, 503],
      [true, 'client_secret_post', true, 500],
      [true, 'client_secret_post', true, 200],
    ]);
    expect((await view(vault.id, credential.id)).berth.refresh).toMatchObject({ status: 'scheduled', last_error: null });
    // A failure is planned with the credential's write: none was.
    expect((await call(gw.url, gw.keyA, 'GET', `/v1/webhooks/${hookId}/deliveries`)).json.data).toEqual([]);
    await flaky.close();
  });

  it('invalid_grant: refreshing fails for good, a receiver gets vault_credential.refresh_failed (verified by unwrap), and the egress refuses the token once it has expired', async () => {
    const RT = secret('rt-revoked');
    const revoked = await new ScriptedTokenEndpoint({ clientId: 'berth-public', method: 'none', refreshToken: RT, accessToken: AT0 }).start();
    revoked.revoke();
    const vault = await client.beta.vaults.create({ display_name: 'revoked' });
    const credential = await client.beta.vaults.credentials.create(vault.id, {
      auth: { type: 'mcp_oauth', mcp_server_url: 'http://mcp.revoked.test/mcp', access_token: AT0, expires_at: soon(), refresh: { token_endpoint: revoked.url, client_id: 'berth-public', refresh_token: RT, token_endpoint_auth: { type: 'none' } } },
    });

    await waitFor(() => received.length === 1, 5_000, 'the refresh_failed delivery');
    const event = new Anthropic({ apiKey: 'unused', webhookKey: signingSecret }).beta.webhooks.unwrap((received[0] as Received).body, { headers: (received[0] as Received).headers as Record<string, string> });
    expect(event).toMatchObject({ type: 'event', data: { type: 'vault_credential.refresh_failed', id: credential.id, vault_id: vault.id, organization_id: 'owner_a', workspace_id: 'default' } });
    expect(revoked.requests.map((r) => [r.refreshToken === RT, r.method, r.clientId, r.clientSecret, r.answered])).toEqual([[true, 'none', 'berth-public', null, 400]]);

    const failed = await view(vault.id, credential.id);
    expect(failed.berth.refresh).toMatchObject({ status: 'failed', next_attempt_at: null, last_refreshed_at: null });
    expect(failed.berth.refresh?.last_error).toMatch(/^the token endpoint answered 400 invalid_grant: refresh token \[redacted\] is not valid/);
    const live = await client.beta.vaults.credentials.mcpOAuthValidate(credential.id, { vault_id: vault.id });
    expect(live).toMatchObject({ status: 'unknown', has_refresh_token: true, refresh: { status: 'failed', http_response: { status_code: 400, content_type: 'application/json', body_truncated: false } } });
    expect(live.refresh?.http_response?.body).toContain('[redacted]');
    // Refused for good: nothing is tried again.
    expect(await gw.refresher.tick()).toBe(0);
    expect(revoked.requests).toHaveLength(1);

    // Time passes: the token expires, and the egress refuses it as it refuses any expired token.
    const stored = await gw.store.vaults.getCredential('owner_a', vault.id, credential.id);
    if (stored?.auth.type !== 'mcp_oauth') throw new Error('credential not stored');
    await gw.store.vaults.updateCredential({ ...stored, auth: { ...stored.auth, expires_at: new Date(Date.now() - 1_000).toISOString() }, version: (stored.version ?? 0) + 1 }, stored.version ?? 0);
    const { socket, sessionId } = await egress.sandbox({ type: 'cloud' }, {}, 'claude-code', [vault.id]);
    const refused = await mcpPost(socket, 'http://mcp.revoked.test/mcp');
    expect([refused.status, refused.headers['x-berth-egress-denied']]).toEqual([403, 'vault_credential_expired']);
    expect(refused.body).toContain(`and Berth could not refresh it: GET /v1/vaults/${vault.id}/credentials/${credential.id} says why (berth.refresh)`);
    expect(egress.bus.dispatched.filter((c) => c.type === 'ReportEgressDenied' && c.meta.session_id === sessionId).map((c) => c.data)).toEqual([expect.objectContaining({ reason: 'vault_credential_expired' })]);
    expect(await client.beta.vaults.credentials.mcpOAuthValidate(credential.id, { vault_id: vault.id })).toMatchObject({ status: 'invalid', refresh: { status: 'failed' } });

    const visible = JSON.stringify([received, failed, live, refused.body, logged.lines]);
    for (const value of [AT0, RT]) expect(visible).not.toContain(value);
    await revoked.close();
  });
});

describe('two gateways on one store', () => {
  const keys = `test:${randomBytes(32).toString('base64')}`;
  const RT0 = secret('rt-shared');
  const CLIENT_SECRET = secret('client-secret');
  let dir: string;
  let gateways: GatewayHarness[] = [];
  let tokens: ScriptedTokenEndpoint;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'berth-refresh-'));
    const storeUrl = `sqlite:${join(dir, 'berth.db')}`;
    // Replicas: one store, one key ring; their refreshers tick only when the test says.
    gateways = [];
    for (let i = 0; i < 2; i++) gateways.push(await startGateway({ turnRunner: false, storeUrl, secretKeys: keys, refresher: { policy: POLICY, start: false } }));
    tokens = await new ScriptedTokenEndpoint({ clientId: 'berth-client', method: 'client_secret_post', clientSecret: CLIENT_SECRET, refreshToken: RT0, accessToken: secret('at-shared') }).start();
  });
  afterAll(async () => {
    for (const g of gateways) await g.close();
    await tokens?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('never both refresh one credential: while one exchanges its refresh token, the other stands by; once it stops, the other takes over with the rotated token', async () => {
    const [b, c] = gateways as [GatewayHarness, GatewayHarness];
    const client = new Anthropic({ apiKey: b.keyA, baseURL: b.url, maxRetries: 0 });
    const vault = await client.beta.vaults.create({ display_name: 'shared' });
    const credential = await client.beta.vaults.credentials.create(vault.id, {
      auth: {
        type: 'mcp_oauth',
        mcp_server_url: 'https://mcp.shared.example/mcp',
        access_token: secret('at'),
        expires_at: soon(),
        refresh: { token_endpoint: tokens.url, client_id: 'berth-client', refresh_token: RT0, token_endpoint_auth: { type: 'client_secret_post', client_secret: CLIENT_SECRET } },
      },
    });

    const held = tokens.hold();
    const first = b.refresher.tick();
    await held.arrived;
    // B is mid-exchange with the credential still due: C must not present the same refresh token.
    expect(await c.refresher.tick()).toBe(0);
    held.release();
    expect(await first).toBe(1);
    expect(tokens.requests.map((r) => [r.refreshToken, r.answered])).toEqual([[RT0, 200]]);
    const RT1 = tokens.currentRefreshToken;

    // B stops (its lease is given up); the credential is due again after an update: C refreshes, with the rotated token.
    await b.close();
    gateways = [c];
    const clientC = new Anthropic({ apiKey: c.keyA, baseURL: c.url, maxRetries: 0 });
    await clientC.beta.vaults.credentials.update(credential.id, { vault_id: vault.id, auth: { type: 'mcp_oauth', expires_at: soon() } });
    expect(await c.refresher.tick()).toBe(1);
    expect(tokens.requests.map((r) => [r.refreshToken, r.answered])).toEqual([
      [RT0, 200],
      [RT1, 200],
    ]);
    expect([tokens.uses(RT0), tokens.uses(RT1 ?? '')]).toEqual([1, 1]);
    expect(((await clientC.beta.vaults.credentials.retrieve(credential.id, { vault_id: vault.id })) as unknown as View).berth.refresh).toMatchObject({ status: 'scheduled', last_error: null });
  });
});
