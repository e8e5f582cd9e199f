import Anthropic from '@anthropic-ai/sdk';
import { startGateway, type GatewayHarness } from './support/gateway-harness';
import { call } from './support/api';

/** Vaults and credentials through the official SDK (`client.beta.vaults`), secrets sealed at rest and never answered. */
describe('vaults and credentials', () => {
  let gw: GatewayHarness;
  let client: Anthropic;
  beforeAll(async () => {
    gw = await startGateway({ turnRunner: false });
    client = new Anthropic({ apiKey: gw.keyA, baseURL: gw.url, maxRetries: 0 });
  });
  afterAll(() => gw.close());

  it('creates, lists, updates, archives and deletes a vault as the SDK calls it', async () => {
    const vault = await client.beta.vaults.create({ display_name: 'ci', metadata: { team: 'infra' } });
    expect(vault).toMatchObject({ type: 'vault', display_name: 'ci', metadata: { team: 'infra' }, archived_at: null });
    expect(vault.id).toMatch(/^vlt_/);
    expect((await client.beta.vaults.retrieve(vault.id)).display_name).toBe('ci');
    const updated = await client.beta.vaults.update(vault.id, { display_name: 'ci-2', metadata: { team: null, env: 'prod' } });
    expect(updated).toMatchObject({ display_name: 'ci-2', metadata: { env: 'prod' } });
    const ids: string[] = [];
    for await (const v of client.beta.vaults.list()) ids.push(v.id);
    expect(ids).toContain(vault.id);
    const archived = await client.beta.vaults.archive(vault.id);
    expect(archived.archived_at).not.toBeNull();
    const listed: string[] = [];
    for await (const v of client.beta.vaults.list()) listed.push(v.id);
    expect(listed).not.toContain(vault.id);
    await expect(client.beta.vaults.update(vault.id, { display_name: 'x' })).rejects.toMatchObject({ status: 409 });
    await expect(client.beta.vaults.credentials.create(vault.id, { auth: { type: 'static_bearer', mcp_server_url: 'https://mcp.example.com/', token: 't' } })).rejects.toMatchObject({ status: 409 });
    expect(await client.beta.vaults.delete(vault.id)).toEqual({ id: vault.id, type: 'vault_deleted' });
    await expect(client.beta.vaults.retrieve(vault.id)).rejects.toMatchObject({ status: 404 });
  });

  it('keeps a credential’s secret write-only: never answered, sealed under a key id at rest, bound to its record', async () => {
    const vault = await client.beta.vaults.create({ display_name: 'secrets' });
    const token = 'ghp_very-secret-token-123';
    const created = await client.beta.vaults.credentials.create(vault.id, { display_name: 'github', auth: { type: 'static_bearer', mcp_server_url: 'https://api.githubcopilot.com/mcp/', token } });
    expect(created).toMatchObject({ type: 'vault_credential', vault_id: vault.id, display_name: 'github', auth: { type: 'static_bearer', mcp_server_url: 'https://api.githubcopilot.com/mcp/' } });
    const env = await client.beta.vaults.credentials.create(vault.id, {
      auth: { type: 'environment_variable', secret_name: 'DEPLOY_TOKEN', secret_value: 'dpl_other-secret', networking: { type: 'limited', allowed_hosts: ['deploy.example.com'] } },
    });
    expect(env.auth).toEqual({ type: 'environment_variable', secret_name: 'DEPLOY_TOKEN', networking: { type: 'limited', allowed_hosts: ['deploy.example.com'] }, injection_location: { header: true, body: false } });

    const answers = [
      JSON.stringify(created),
      JSON.stringify(await client.beta.vaults.credentials.retrieve(created.id, { vault_id: vault.id })),
      (await call(gw.url, gw.keyA, 'GET', `/v1/vaults/${vault.id}/credentials`)).text,
    ];
    for (const text of answers) {
      expect(text).not.toContain(token);
      expect(text).not.toContain('dpl_other-secret');
      expect(text).not.toContain('ciphertext');
    }
    const stored = await gw.store.vaults.getCredential('owner_a', vault.id, created.id);
    if (!stored) throw new Error('credential not stored');
    expect(JSON.stringify(stored)).not.toContain(token);
    expect(stored.secret.key_id).toBe('test');
    expect(JSON.parse(gw.secrets.open(stored.secret, created.id))).toEqual({ value: token });
    expect(() => gw.secrets.open(stored.secret, env.id)).toThrow();

    const rotated = await client.beta.vaults.credentials.update(created.id, { vault_id: vault.id, auth: { type: 'static_bearer', token: 'ghp_new' } });
    expect(rotated.auth).toEqual(created.auth);
    const after = await gw.store.vaults.getCredential('owner_a', vault.id, created.id);
    expect(after && JSON.parse(gw.secrets.open(after.secret, created.id))).toEqual({ value: 'ghp_new' });
  });

  it('refuses with stable codes: a second credential for the same server, a changed auth type, a reserved variable, an archived credential', async () => {
    const vault = await client.beta.vaults.create({ display_name: 'rules' });
    const first = await client.beta.vaults.credentials.create(vault.id, { auth: { type: 'static_bearer', mcp_server_url: 'https://mcp.example.com/x', token: 't1' } });
    const again = await call(gw.url, gw.keyA, 'POST', `/v1/vaults/${vault.id}/credentials`, { auth: { type: 'static_bearer', mcp_server_url: 'https://MCP.example.com/x', token: 't2' } });
    expect([again.status, again.json.error.code]).toEqual([409, 'CREDENTIAL_CONFLICT']);
    const retyped = await call(gw.url, gw.keyA, 'POST', `/v1/vaults/${vault.id}/credentials/${first.id}`, { auth: { type: 'mcp_oauth', access_token: 'a' } });
    expect([retyped.status, retyped.json.error.code]).toEqual([400, 'VALIDATION_ERROR']);
    const reserved = await call(gw.url, gw.keyA, 'POST', `/v1/vaults/${vault.id}/credentials`, { auth: { type: 'environment_variable', secret_name: 'ANTHROPIC_API_KEY', secret_value: 'x', networking: { type: 'unrestricted' } } });
    expect([reserved.status, reserved.json.error.code]).toEqual([400, 'VALIDATION_ERROR']);
    // Nor the variables that make the sandbox trust the egress's CA.
    for (const secret_name of ['SSL_CERT_FILE', 'NODE_EXTRA_CA_CERTS', 'CURL_CA_BUNDLE']) {
      const trust = await call(gw.url, gw.keyA, 'POST', `/v1/vaults/${vault.id}/credentials`, { auth: { type: 'environment_variable', secret_name, secret_value: 'x', networking: { type: 'unrestricted' } } });
      expect([secret_name, trust.status, trust.json.error.code]).toEqual([secret_name, 400, 'VALIDATION_ERROR']);
    }
    const nowhere = await call(gw.url, gw.keyA, 'POST', `/v1/vaults/${vault.id}/credentials`, { auth: { type: 'environment_variable', secret_name: 'T', secret_value: 'x', networking: { type: 'unrestricted' }, injection_location: { header: false, body: false } } });
    expect([nowhere.status, nowhere.json.error.code]).toEqual([400, 'VALIDATION_ERROR']);
    await client.beta.vaults.credentials.archive(first.id, { vault_id: vault.id });
    const archivedUpdate = await call(gw.url, gw.keyA, 'POST', `/v1/vaults/${vault.id}/credentials/${first.id}`, { display_name: 'x' });
    expect([archivedUpdate.status, archivedUpdate.json.error.code]).toEqual([409, 'CREDENTIAL_ARCHIVED']);
    expect(await client.beta.vaults.credentials.delete(first.id, { vault_id: vault.id })).toEqual({ id: first.id, type: 'vault_credential_deleted' });
  });

  it('mcp_oauth: a refresh configuration is kept (its secrets sealed, never answered) and checked with clear 400s; an expiry must lie ahead', async () => {
    const vault = await client.beta.vaults.create({ display_name: 'oauth' });
    const mcp_server_url = 'https://mcp.oauth.example/mcp';
    const refresh = {
      token_endpoint: 'https://auth.oauth.example/token',
      client_id: 'berth',
      refresh_token: 'rt_secret-refresh',
      token_endpoint_auth: { type: 'client_secret_post' as const, client_secret: 'cs_secret-client' },
      scope: 'mcp',
    };
    const expires_at = new Date(Date.now() + 3_600_000).toISOString();
    const withRefresh = await client.beta.vaults.credentials.create(vault.id, { auth: { type: 'mcp_oauth', mcp_server_url, access_token: 'at_1', expires_at, refresh } });
    expect(withRefresh.auth).toEqual({
      type: 'mcp_oauth',
      mcp_server_url,
      expires_at,
      refresh: { token_endpoint: 'https://auth.oauth.example/token', client_id: 'berth', token_endpoint_auth: { type: 'client_secret_post' }, scope: 'mcp', resource: null },
    });
    expect((withRefresh as unknown as { berth: unknown }).berth).toEqual({
      refresh: { status: 'scheduled', next_attempt_at: new Date(Date.parse(expires_at) - 5 * 60_000).toISOString(), last_attempt_at: null, last_refreshed_at: null, last_error: null },
    });
    const stored = await gw.store.vaults.getCredential('owner_a', vault.id, withRefresh.id);
    const answers = JSON.stringify(withRefresh) + (await call(gw.url, gw.keyA, 'GET', `/v1/vaults/${vault.id}/credentials/${withRefresh.id}`)).text + JSON.stringify(stored);
    for (const secret of ['rt_secret-refresh', 'cs_secret-client', 'at_1']) expect(answers).not.toContain(secret);
    if (!stored?.refresh?.client_secret) throw new Error('refresh secrets not stored');
    expect(gw.secrets.open(stored.refresh.refresh_token, `${withRefresh.id}:refresh_token`)).toBe('rt_secret-refresh');
    expect(gw.secrets.open(stored.refresh.client_secret, `${withRefresh.id}:client_secret`)).toBe('cs_secret-client');
    expect(() => gw.secrets.open(stored.refresh?.refresh_token ?? stored.secret, withRefresh.id)).toThrow();

    const create = (over: Record<string, unknown>) =>
      call(gw.url, gw.keyA, 'POST', `/v1/vaults/${vault.id}/credentials`, { auth: { type: 'mcp_oauth', mcp_server_url: 'https://mcp.other.example/mcp', access_token: 'at', refresh: { ...refresh, ...over } } });
    const relative = await create({ token_endpoint: '/token' });
    expect([relative.status, relative.json.error.code, relative.json.error.message]).toEqual([400, 'VALIDATION_ERROR', 'auth.refresh.token_endpoint: must be an http(s) URL']);
    const noSecret = await create({ token_endpoint_auth: { type: 'client_secret_basic' } });
    expect([noSecret.status, noSecret.json.error.message]).toEqual([400, 'auth.refresh.token_endpoint_auth.client_secret: is required for client_secret_basic (the secret Berth sends to the token endpoint)']);
    for (const answer of [relative, noSecret]) expect(answer.text).not.toContain('rt_secret-refresh');
    // Where the operator has not allowed private targets (this harness has, for its loopback receivers).
    const strict = await startGateway({ turnRunner: false, allowPrivateWebhookTargets: false });
    const strictVault = await call(strict.url, strict.keyA, 'POST', '/v1/vaults', { display_name: 'strict' });
    for (const [token_endpoint, rule] of [
      ['http://auth.oauth.example/token', /^auth\.refresh\.token_endpoint: must be an https:\/\/ URL/],
      ['https://127.0.0.1/token', /^auth\.refresh\.token_endpoint: 127\.0\.0\.1 is not a public address \(loopback\); token endpoints must be public addresses/],
      ['https://169.254.169.254/token', /is not a public address \(linkLocal\)/],
    ] as const) {
      const refused = await call(strict.url, strict.keyA, 'POST', `/v1/vaults/${strictVault.json.id}/credentials`, { auth: { type: 'mcp_oauth', mcp_server_url, access_token: 'at', refresh: { ...refresh, token_endpoint } } });
      expect([token_endpoint, refused.status, refused.json.error.code, refused.json.error.details]).toEqual([token_endpoint, 400, 'VAULT_TOKEN_ENDPOINT_NOT_ALLOWED', { field: 'auth.refresh.token_endpoint' }]);
      expect(refused.json.error.message).toMatch(rule);
    }
    await strict.close();

    const past = await call(gw.url, gw.keyA, 'POST', `/v1/vaults/${vault.id}/credentials`, { auth: { type: 'mcp_oauth', mcp_server_url, access_token: 'at_1', expires_at: '2020-01-01T00:00:00Z' } });
    expect([past.status, past.json.error.code, past.json.error.message]).toEqual([400, 'VALIDATION_ERROR', 'auth.expires_at must be in the future (2020-01-01T00:00:00Z has passed)']);

    const created = await client.beta.vaults.credentials.create(vault.id, { auth: { type: 'mcp_oauth', mcp_server_url: 'https://mcp.plain.example/mcp', access_token: 'at_1', expires_at, refresh: null } });
    expect(created.auth).toEqual({ type: 'mcp_oauth', mcp_server_url: 'https://mcp.plain.example/mcp', expires_at, refresh: null });
    expect((created as unknown as { berth: unknown }).berth).toEqual({ refresh: null });
    const addRefresh = await call(gw.url, gw.keyA, 'POST', `/v1/vaults/${vault.id}/credentials/${created.id}`, { auth: { type: 'mcp_oauth', refresh: { refresh_token: 'rt_2' } } });
    expect([addRefresh.status, addRefresh.json.error.code]).toEqual([400, 'VALIDATION_ERROR']);
    expect(addRefresh.json.error.message).toMatch(/^auth\.refresh: this credential was created without a refresh configuration/);

    // An update of the refresh secrets reseals them and plans refreshing afresh.
    const rotated = await client.beta.vaults.credentials.update(withRefresh.id, {
      vault_id: vault.id,
      auth: { type: 'mcp_oauth', refresh: { refresh_token: 'rt_new-refresh', scope: '', token_endpoint_auth: { type: 'client_secret_basic', client_secret: 'cs_new-client' } } },
    });
    expect(rotated.auth).toMatchObject({ refresh: { token_endpoint_auth: { type: 'client_secret_post' }, scope: null } });
    const after = await gw.store.vaults.getCredential('owner_a', vault.id, withRefresh.id);
    if (!after?.refresh?.client_secret) throw new Error('refresh secrets not stored');
    expect([gw.secrets.open(after.refresh.refresh_token, `${withRefresh.id}:refresh_token`), gw.secrets.open(after.refresh.client_secret, `${withRefresh.id}:client_secret`)]).toEqual(['rt_new-refresh', 'cs_new-client']);
    expect(after.version).toBe(1);
  });

  it('mcp_oauth: a new token cannot keep an expiry that has passed', async () => {
    const vault = await client.beta.vaults.create({ display_name: 'oauth-expiry' });
    const mcp_server_url = 'https://mcp.oauth.example/mcp';
    const expires_at = new Date(Date.now() + 3_600_000).toISOString();
    const created = await client.beta.vaults.credentials.create(vault.id, { auth: { type: 'mcp_oauth', mcp_server_url, access_token: 'at_1', expires_at } });
    // The stored expiry passes: a new token alone would inherit it and never be sent.
    const stored = await gw.store.vaults.getCredential('owner_a', vault.id, created.id);
    if (!stored || stored.auth.type !== 'mcp_oauth') throw new Error('credential not stored');
    await gw.store.vaults.putCredential({ ...stored, auth: { ...stored.auth, expires_at: '2020-01-01T00:00:00.000Z' } });
    const inherits = await call(gw.url, gw.keyA, 'POST', `/v1/vaults/${vault.id}/credentials/${created.id}`, { auth: { type: 'mcp_oauth', access_token: 'at_2' } });
    expect([inherits.status, inherits.json.error.code]).toEqual([400, 'VALIDATION_ERROR']);
    expect(inherits.json.error.message).toMatch(/^auth\.expires_at: the stored expiry \(2020-01-01T00:00:00\.000Z\) has passed, so the new access_token would never be sent/);
    const renewed = await client.beta.vaults.credentials.update(created.id, { vault_id: vault.id, auth: { type: 'mcp_oauth', access_token: 'at_2', expires_at } });
    expect(renewed.auth).toEqual({ type: 'mcp_oauth', mcp_server_url, expires_at, refresh: null });
  });

  it('mcp_oauth_validate answers in the SDK\'s shape from the expiry (the server is not called); other credential types get CREDENTIAL_NOT_MCP_OAUTH', async () => {
    const vault = await client.beta.vaults.create({ display_name: 'validate' });
    const live = await client.beta.vaults.credentials.create(vault.id, { auth: { type: 'mcp_oauth', mcp_server_url: 'https://mcp.live.example/mcp', access_token: 'at', expires_at: new Date(Date.now() + 3_600_000).toISOString() } });
    const unknown = await client.beta.vaults.credentials.mcpOAuthValidate(live.id, { vault_id: vault.id });
    expect(unknown).toMatchObject({ type: 'vault_credential_validation', credential_id: live.id, vault_id: vault.id, status: 'unknown', has_refresh_token: false, mcp_probe: null, refresh: null });
    expect(Date.parse(unknown.validated_at)).not.toBeNaN();
    expect((unknown as unknown as { berth: { probed: boolean; detail: string } }).berth).toMatchObject({ probed: false, expired: false, detail: expect.stringContaining('Berth does not call the MCP server') });

    const expiring = await client.beta.vaults.credentials.create(vault.id, { auth: { type: 'mcp_oauth', mcp_server_url: 'https://mcp.old.example/mcp', access_token: 'at' } });
    const stored = await gw.store.vaults.getCredential('owner_a', vault.id, expiring.id);
    if (!stored || stored.auth.type !== 'mcp_oauth') throw new Error('credential not stored');
    await gw.store.vaults.putCredential({ ...stored, auth: { ...stored.auth, expires_at: '2020-01-01T00:00:00.000Z' } });
    const invalid = await client.beta.vaults.credentials.mcpOAuthValidate(expiring.id, { vault_id: vault.id });
    expect(invalid).toMatchObject({ status: 'invalid', has_refresh_token: false, mcp_probe: null, refresh: { status: 'no_refresh_token', http_response: null } });
    expect((invalid as unknown as { berth: { detail: string } }).berth.detail).toMatch(/^the access token expired at 2020-01-01T00:00:00\.000Z/);

    const bearer = await client.beta.vaults.credentials.create(vault.id, { auth: { type: 'static_bearer', mcp_server_url: 'https://mcp.bearer.example/', token: 't' } });
    const wrongType = await call(gw.url, gw.keyA, 'POST', `/v1/vaults/${vault.id}/credentials/${bearer.id}/mcp_oauth_validate`);
    expect([wrongType.status, wrongType.json.error.code]).toEqual([400, 'CREDENTIAL_NOT_MCP_OAUTH']);
    const foreign = await call(gw.url, gw.keyB, 'POST', `/v1/vaults/${vault.id}/credentials/${live.id}/mcp_oauth_validate`);
    expect([foreign.status, foreign.json.error.code]).toEqual([404, 'VAULT_NOT_FOUND']);
  });

  it('answers 503 SECRETS_NOT_CONFIGURED when the server has no key, and keeps nothing', async () => {
    const bare = await startGateway({ turnRunner: false, secretKeys: false });
    const vault = await call(bare.url, bare.keyA, 'POST', '/v1/vaults', { display_name: 'v' });
    const res = await call(bare.url, bare.keyA, 'POST', `/v1/vaults/${vault.json.id}/credentials`, { auth: { type: 'static_bearer', mcp_server_url: 'https://mcp.example.com/', token: 't' } });
    expect([res.status, res.json.error.code]).toEqual([503, 'SECRETS_NOT_CONFIGURED']);
    expect((await call(bare.url, bare.keyA, 'GET', `/v1/vaults/${vault.json.id}/credentials`)).json.data).toEqual([]);
    await bare.close();
  });

  it("pins a session's vault_ids at create: the owner's own live vaults, each once; another owner's is a 404, an archived one a 409", async () => {
    const agent = await client.beta.agents.create({ name: 'vaulted', model: 'claude-sonnet-4-6' });
    const environment = await client.beta.environments.create({ name: 'vaulted' });
    const create = (vault_ids: string[], key = gw.keyA) =>
      call(gw.url, key, 'POST', '/v1/sessions', { agent: agent.id, environment_id: environment.id, vault_ids });
    const first = await client.beta.vaults.create({ display_name: 'one' });
    const second = await client.beta.vaults.create({ display_name: 'two' });

    const session = await client.beta.sessions.create({ agent: agent.id, environment_id: environment.id, vault_ids: [second.id, first.id, second.id] });
    expect(session.vault_ids).toEqual([second.id, first.id]);
    expect((await client.beta.sessions.retrieve(session.id)).vault_ids).toEqual([second.id, first.id]);
    expect((await client.beta.sessions.create({ agent: agent.id, environment_id: environment.id })).vault_ids).toEqual([]);

    const theirs = await call(gw.url, gw.keyB, 'POST', '/v1/vaults', { display_name: 'b' });
    const foreign = await create([first.id, theirs.json.id]);
    expect([foreign.status, foreign.json.error.code]).toEqual([404, 'VAULT_NOT_FOUND']);
    await client.beta.vaults.archive(first.id);
    const archived = await create([first.id]);
    expect([archived.status, archived.json.error.code]).toEqual([409, 'VAULT_ARCHIVED']);
    const malformed = await create(['not-a-vault']);
    expect([malformed.status, malformed.json.error.code]).toEqual([400, 'VALIDATION_ERROR']);
    const tooMany = await create(Array.from({ length: 9 }, (_, i) => `vlt_${i}`));
    expect(tooMany.status).toBe(400);
    const update = await call(gw.url, gw.keyA, 'POST', `/v1/sessions/${session.id}`, { vault_ids: [second.id] });
    expect(update.status).toBe(400);
  });
});
