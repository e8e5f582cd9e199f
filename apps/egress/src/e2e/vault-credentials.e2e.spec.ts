import Anthropic from '@anthropic-ai/sdk';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { AnthropicMessagesServer, lookupAnswer, OpenAiResponsesServer, reply, TestCertificates, TestMcpServer } from '@berth/testing';
// eslint-disable-next-line @nx/enforce-module-boundaries -- test support shared with the sandbox-manager's e2e specs
import { e2eEnvironmentConfig, startE2ePlatform, waitFor, type E2ePlatform } from '../../../sandbox-manager/src/testing/e2e-platform';
// eslint-disable-next-line @nx/enforce-module-boundaries -- test support shared with the sandbox-manager's e2e specs
import { listEvents, type PublicEvent } from '../../../sandbox-manager/src/testing/session-events';

/**
 * A vault credential used as Managed Agents users use one: a bearer token for an MCP server is
 * stored once with the official SDK, a session names the vault, and the real Claude Code CLI in a
 * sandbox on the default network calls the server, which answers only that token. The egress adds
 * it on the way out, so the token is in none of the sandbox's files, its environment, the journal,
 * the events or the logs, and the vault API never answers it. Both for a plain-HTTP server and for
 * an HTTPS one (its own CA, which the egress trusts through BERTH_EGRESS_UPSTREAM_CA_FILE): there
 * the egress terminates the sandbox's TLS with a certificate of its own CA for that host.
 */

const TURN_TIMEOUT_MS = 120_000;
// Made of two halves so that the probe command (which the journal records) can look for the whole
// token without containing it.
const TOKEN_HEAD = `mcp-bearer-${randomBytes(6).toString('hex')}`;
const TOKEN_TAIL = randomBytes(10).toString('hex');
const TOKEN = `${TOKEN_HEAD}${TOKEN_TAIL}`;
const MCP_HOST = 'mcp.vaulted.test';
const MCP_URL = `http://${MCP_HOST}/mcp`;
const TLS_TOKEN_HEAD = `mcp-tls-bearer-${randomBytes(6).toString('hex')}`;
const TLS_TOKEN_TAIL = randomBytes(10).toString('hex');
const TLS_TOKEN = `${TLS_TOKEN_HEAD}${TLS_TOKEN_TAIL}`;
const TLS_HOST = 'mcp.vaulted-tls.test';
const TLS_URL = `https://${TLS_HOST}/mcp`;
const INITIALIZE = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1' } } });

/**
 * A bash script for the sandbox that looks for a token (given as two halves, so that the command,
 * which the journal records, never holds it) in its files, its environment and every process's
 * environment and arguments, and shows that it could see the harness's arguments (`seen`) and the
 * egress mount.
 */
function tokenProbe(head: string, tail: string, seen: string): string {
  return [
    // Bash joins the two quoted halves; the command text never holds them side by side.
    `t="${head}"'${tail}'; echo "TOKEN-LENGTH \${#t}"`,
    'for d in / /home /workspace /tmp /mnt /run /etc /var /opt /root; do [ -d "$d" ] && echo "SCANNED $d"; done',
    // The pattern comes from a pipe (printf is a builtin), so no grep process holds the token in its arguments.
    'grep -r -a -l -F -s -f <(printf "%s\\n" "$t") /home /workspace /tmp /mnt /run /etc /var /opt /root 2>/dev/null | sed "s/^/FOUND-FILE /"; echo FILES-END',
    'env | grep -c -F -f <(printf "%s\\n" "$t") | sed "s/^/ENV-HITS /"',
    'for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do tr "\\0" "\\n" < "$f" 2>/dev/null; done | grep -c -F -f <(printf "%s\\n" "$t") | sed "s/^/PROC-HITS /"',
    `for f in /proc/[0-9]*/cmdline; do tr "\\0" " " < "$f" 2>/dev/null; echo; done | grep -c -F "${seen}" | sed "s/^/MCP-CONFIG-SEEN /"`,
    // The egress mount holds the socket and the CA's certificate, never a key.
    'ls /run/berth | tr "\\n" " " | sed "s/^/EGRESS-MOUNT /"; echo',
    'grep -r -l -s "PRIVATE KEY" /run/berth | sed "s/^/KEY-FILE /"; echo KEYS-END',
  ].join('\n');
}

function expectProbeFoundNothing(output: string, token: string): void {
  expect(output).toContain(`TOKEN-LENGTH ${token.length}`);
  expect(output).toContain('SCANNED /home');
  expect(output).toContain('FILES-END');
  expect(output).not.toContain('FOUND-FILE');
  expect(output).toContain('ENV-HITS 0');
  expect(output).toContain('PROC-HITS 0');
  // The probe can see the harness's arguments (so PROC-HITS 0 is a real search): the MCP URL is there, the token is not.
  expect(output).toMatch(/MCP-CONFIG-SEEN [1-9]/);
  expect(output).toMatch(/EGRESS-MOUNT .*ca\.pem/);
  expect(output).toContain('KEYS-END');
  expect(output).not.toContain('KEY-FILE');
}

describe('a session with a vault calls its MCP server with the bearer token it never sees', () => {
  let model: AnthropicMessagesServer;
  let responses: OpenAiResponsesServer;
  let mcp: TestMcpServer;
  let certs: TestCertificates;
  let tlsMcp: TestMcpServer;
  let platform: E2ePlatform;
  let client: Anthropic;

  beforeAll(async () => {
    model = await new AnthropicMessagesServer().start();
    // Codex's environment names this Responses API endpoint itself (trusted as an operator would).
    responses = await new OpenAiResponsesServer().start();
    mcp = await new TestMcpServer({ bearerToken: TOKEN }).start();
    certs = await TestCertificates.create(TLS_HOST);
    tlsMcp = await new TestMcpServer({ bearerToken: TLS_TOKEN, tls: certs.server, name: 'berth-test-mcp-tls' }).start();
    platform = await startE2ePlatform({
      modelBaseUrl: model.url,
      trustedModelEndpoints: [responses.url],
      // The MCP servers run on loopback; the egress's upstream proxy serves them under public-looking
      // names (the HTTPS one's tunnels joined to it as they are, so the TLS is the server's own).
      upstreamHosts: { [MCP_HOST]: { origin: new URL(mcp.url).origin }, [TLS_HOST]: { tcp: new URL(tlsMcp.url).host } },
      // The test CA stands in for a public one: the egress verifies the HTTPS server against it.
      egressEnv: { BERTH_EGRESS_UPSTREAM_CA_FILE: certs.caFile },
      // The key ring the gateway seals credentials with and the egress opens them with.
      env: { BERTH_SECRET_KEYS: `e2e:${randomBytes(32).toString('base64')}` },
    });
    client = new Anthropic({ apiKey: platform.apiKey, baseURL: platform.gatewayUrl, maxRetries: 0 });
  }, 900_000);
  afterAll(async () => {
    await platform?.stop();
    await mcp?.close();
    await tlsMcp?.close();
    certs?.remove();
    await model?.close();
    await responses?.close();
  }, 120_000);

  const turn = async (sessionId: string, text: string): Promise<PublicEvent[]> => {
    const before = (await listEvents(client, sessionId)).filter((e) => e.type === 'session.status_idle').length;
    await client.beta.sessions.events.send(sessionId, { events: [{ type: 'user.message', content: [{ type: 'text', text }] }] });
    return waitFor(
      `a turn of ${sessionId} to end`,
      async () => {
        const all = await listEvents(client, sessionId);
        return all.filter((e) => e.type === 'session.status_idle').length > before ? all : null;
      },
      TURN_TIMEOUT_MS,
      platform.logs,
    );
  };

  it(
    'calls the MCP server successfully; the token is nowhere in the sandbox, the journal, the events or the logs, and the API never answers it',
    async () => {
      const vault = await client.beta.vaults.create({ display_name: 'docs server' });
      const credential = await client.beta.vaults.credentials.create(vault.id, { display_name: 'docs', auth: { type: 'static_bearer', mcp_server_url: MCP_URL, token: TOKEN } });
      const agent = await client.beta.agents.create({
        name: 'vaulted',
        model: 'claude-sonnet-4-6',
        system: 'You look things up in the docs server.',
        mcp_servers: [{ type: 'url', name: 'docs', url: MCP_URL }],
        tools: [{ type: 'agent_toolset_20260401' }, { type: 'mcp_toolset', mcp_server_name: 'docs' }],
      });
      const environment = await client.beta.environments.create({ name: 'vaulted', config: e2eEnvironmentConfig({ harness: 'claude-code' }) });
      const session = await client.beta.sessions.create({ agent: agent.id, environment_id: environment.id, vault_ids: [vault.id] });
      expect(session.vault_ids).toEqual([vault.id]);

      // Turn 1: the model calls the MCP tool; the server answers only the vault's token.
      model.script(reply.toolCall('mcp__docs__lookup', { key: 'treasure' }), reply.text('The treasure is 42.'));
      const calls = mcp.calls.length;
      const afterMcp = await turn(session.id, 'Look up the treasure.');
      expect(mcp.calls.slice(calls).map((c) => [c.tool, c.arguments])).toEqual([['lookup', { key: 'treasure' }]]);
      expect(mcp.authorizations.length).toBeGreaterThan(0);
      expect(new Set(mcp.authorizations)).toEqual(new Set([`Bearer ${TOKEN}`]));
      const result = afterMcp.find((e) => e.type === 'agent.mcp_tool_result');
      expect(result).toMatchObject({ is_error: false });
      expect(JSON.stringify(result)).toContain(lookupAnswer('treasure'));
      expect(afterMcp.filter((e) => e.type === 'session.status_idle').at(-1)).toMatchObject({ stop_reason: { type: 'end_turn' } });

      // Turn 2: from inside the sandbox, look for the token in its files, its environment and every process's arguments.
      const probe = tokenProbe(TOKEN_HEAD, TOKEN_TAIL, MCP_HOST);
      model.script(reply.toolCall('Bash', { command: probe, description: 'look for the token' }), reply.text('Nothing found.'));
      const all = await turn(session.id, 'Look around.');
      const output = ((all.filter((e) => e.type === 'agent.tool_result').at(-1)?.['content'] ?? []) as { text?: string }[]).map((c) => c.text ?? '').join('\n');
      expectProbeFoundNothing(output, TOKEN);

      await expectNowhere(TOKEN, TOKEN_TAIL, all, [credential], vault.id, session.id);
    },
    TURN_TIMEOUT_MS * 3,
  );

  /** The token is in none of the events, the store's files (WAL included), the logs, the model's requests or the API's answers. */
  const expectNowhere = async (token: string, tail: string, events: readonly PublicEvent[], credentials: readonly { id: string }[], vaultId: string, sessionId: string) => {
    expect(JSON.stringify(events)).not.toContain(token);
    const storeFiles = readdirSync(dirname(platform.storePath)).filter((f) => f.startsWith(basename(platform.storePath)));
    expect(storeFiles.length).toBeGreaterThan(0);
    for (const file of storeFiles) expect([file, readFileSync(join(dirname(platform.storePath), file)).includes(token)]).toEqual([file, false]);
    expect(platform.logs()).not.toContain(token);
    expect(platform.logs()).not.toContain(tail);
    expect(JSON.stringify(model.modelRequests)).not.toContain(token);
    const answers = [
      ...credentials.map((c) => JSON.stringify(c)),
      ...(await Promise.all(credentials.map(async (c) => JSON.stringify(await client.beta.vaults.credentials.retrieve(c.id, { vault_id: vaultId }))))),
      JSON.stringify(await client.beta.vaults.credentials.list(vaultId)),
      JSON.stringify(await client.beta.vaults.retrieve(vaultId)),
      JSON.stringify(await client.beta.sessions.retrieve(sessionId)),
    ];
    for (const answer of answers) expect(answer).not.toContain(token);
  };

  it(
    'calls an HTTPS MCP server (its own CA) through the TLS the egress terminates for its host; the token is nowhere, and other hosts stay opaque tunnels',
    async () => {
      const vault = await client.beta.vaults.create({ display_name: 'secure docs' });
      const credential = await client.beta.vaults.credentials.create(vault.id, { display_name: 'secure', auth: { type: 'static_bearer', mcp_server_url: TLS_URL, token: TLS_TOKEN } });
      const agent = await client.beta.agents.create({
        name: 'vaulted-tls',
        model: 'claude-opus-4-6',
        system: 'You look things up in the secure docs server.',
        mcp_servers: [{ type: 'url', name: 'secure', url: TLS_URL }],
        tools: [{ type: 'agent_toolset_20260401' }, { type: 'mcp_toolset', mcp_server_name: 'secure' }],
      });
      const environment = await client.beta.environments.create({ name: 'vaulted-tls', config: e2eEnvironmentConfig({ harness: 'claude-code' }) });
      const session = await client.beta.sessions.create({ agent: agent.id, environment_id: environment.id, vault_ids: [vault.id] });

      // Turn 1: the model calls the MCP tool over HTTPS; the server answers only the vault's token.
      model.script(reply.toolCall('mcp__secure__lookup', { key: 'vault' }), reply.text('The vault is 42.'));
      const [calls, requests, tunnels] = [tlsMcp.calls.length, model.modelRequests.length, platform.upstream.requests.length];
      const afterMcp = await turn(session.id, 'Look up the vault.');
      expect(tlsMcp.calls.slice(calls).map((c) => [c.tool, c.arguments])).toEqual([['lookup', { key: 'vault' }]]);
      expect(tlsMcp.authorizations.length).toBeGreaterThan(0);
      expect(new Set(tlsMcp.authorizations)).toEqual(new Set([`Bearer ${TLS_TOKEN}`]));
      const result = afterMcp.find((e) => e.type === 'agent.mcp_tool_result');
      expect(result).toMatchObject({ is_error: false });
      expect(JSON.stringify(result)).toContain(lookupAnswer('vault'));
      expect(afterMcp.filter((e) => e.type === 'session.status_idle').at(-1)).toMatchObject({ stop_reason: { type: 'end_turn' } });
      // The agent's own model and system prompt reached the model; the tool's answer came back to it.
      const first = model.modelRequests[requests]?.body as { model?: string; system?: unknown };
      expect(first.model).toBe('claude-opus-4-6');
      expect(JSON.stringify(first.system)).toContain('You look things up in the secure docs server.');
      expect(JSON.stringify(model.modelRequests.slice(requests).map((r) => r.body))).toContain(lookupAnswer('vault'));
      // The egress reached the server through a tunnel of its own (CONNECT to the host's port 443).
      expect(platform.upstream.requests.slice(tunnels)).toContainEqual(expect.objectContaining({ kind: 'connect', host: TLS_HOST, port: 443, served: true }));

      // Turn 2: the sandbox trusts the egress's CA (the certificate only) and sees its certificate for
      // this host alone; a host of no credential is an opaque tunnel; the token is in none of its files or processes.
      const probe = [
        tokenProbe(TLS_TOKEN_HEAD, TLS_TOKEN_TAIL, TLS_HOST),
        'echo "CA-VARS $NODE_EXTRA_CA_CERTS $SSL_CERT_FILE"',
        // curl checks the certificate with the bundle; the server answers initialize only with the token added.
        `curl -sv -o /dev/null -w "TERMINATED %{http_code} %{ssl_verify_result}\\n" -X POST ${TLS_URL} -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' -d '${INITIALIZE}' 2>&1 | grep -E '^TERMINATED|issuer:' | sed 's/^\\* *issuer:/ISSUER/'`,
        // A host no credential names: the egress relays its CONNECT to the upstream, which refuses it (502); inside, no TLS of the egress.
        'curl -s -o /dev/null -w "OPAQUE %{http_connect} %{http_code}\\n" https://elsewhere.example.test/; echo "OPAQUE-EXIT $?"',
      ].join('\n');
      model.script(reply.toolCall('Bash', { command: probe, description: 'look for the token' }), reply.text('Nothing found.'));
      const all = await turn(session.id, 'Look around.');
      const output = ((all.filter((e) => e.type === 'agent.tool_result').at(-1)?.['content'] ?? []) as { text?: string }[]).map((c) => c.text ?? '').join('\n');
      expectProbeFoundNothing(output, TLS_TOKEN);
      expect(output).toContain('CA-VARS /run/berth/ca.pem /run/berth/ca-bundle.pem');
      // curl verified the egress's certificate with the bundle (0 = verified) and the server answered with the token added (200).
      expect(output).toMatch(/TERMINATED 200 0/);
      expect(output).toMatch(/ISSUER .*CN=Berth egress CA [0-9a-f]{8}/);
      expect(output).toMatch(/OPAQUE 502 000/);
      expect(output).toMatch(/OPAQUE-EXIT [1-9]/);

      await expectNowhere(TLS_TOKEN, TLS_TOKEN_TAIL, all, [credential], vault.id, session.id);
    },
    TURN_TIMEOUT_MS * 3,
  );

  it(
    'Codex calls the HTTPS MCP server too: it trusts the egress CA through SSL_CERT_FILE (the bundle)',
    async () => {
      const vault = await client.beta.vaults.create({ display_name: 'secure docs for codex' });
      const credential = await client.beta.vaults.credentials.create(vault.id, { auth: { type: 'static_bearer', mcp_server_url: TLS_URL, token: TLS_TOKEN } });
      const agent = await client.beta.agents.create({
        name: 'vaulted-tls-codex',
        model: 'berth-model',
        system: 'You look things up with Codex.',
        mcp_servers: [{ type: 'url', name: 'secure', url: TLS_URL }],
        tools: [{ type: 'agent_toolset_20260401' }, { type: 'mcp_toolset', mcp_server_name: 'secure' }],
      });
      const environment = await client.beta.environments.create({
        name: 'vaulted-tls-codex',
        config: e2eEnvironmentConfig({ harness: 'codex', model: { base_url: responses.url } }),
      });
      const session = await client.beta.sessions.create({ agent: agent.id, environment_id: environment.id, vault_ids: [vault.id] });

      responses.script(reply.toolCall('lookup', { key: 'codex' }, { namespace: 'mcp__secure' }), reply.text('Codex found 42.'));
      const [calls, authorizations, requests] = [tlsMcp.calls.length, tlsMcp.authorizations.length, responses.modelRequests.length];
      const all = await turn(session.id, 'Look up codex.');
      expect(tlsMcp.calls.slice(calls).map((c) => [c.tool, c.arguments])).toEqual([['lookup', { key: 'codex' }]]);
      expect(new Set(tlsMcp.authorizations.slice(authorizations))).toEqual(new Set([`Bearer ${TLS_TOKEN}`]));
      expect(JSON.stringify(all.find((e) => e.type === 'agent.mcp_tool_result'))).toContain(lookupAnswer('codex'));
      expect(JSON.stringify(responses.modelRequests.slice(requests).map((r) => r.body))).toContain('You look things up with Codex.');
      expect(JSON.stringify(responses.modelRequests)).not.toContain(TLS_TOKEN);
      await expectNowhere(TLS_TOKEN, TLS_TOKEN_TAIL, all, [credential], vault.id, session.id);
    },
    TURN_TIMEOUT_MS * 2,
  );

  it(
    'an environment_variable credential: the harness holds its placeholder, the egress puts the secret in its place in headers to its HTTPS host',
    async () => {
      const vault = await client.beta.vaults.create({ display_name: 'docs api' });
      const credential = await client.beta.vaults.credentials.create(vault.id, {
        auth: { type: 'environment_variable', secret_name: 'DOCS_TOKEN', secret_value: TLS_TOKEN, networking: { type: 'limited', allowed_hosts: [TLS_HOST] } },
      });
      const agent = await client.beta.agents.create({
        name: 'vaulted-variable',
        model: 'claude-sonnet-4-6',
        system: 'You call the docs API with curl.',
        tools: [{ type: 'agent_toolset_20260401' }],
      });
      const environment = await client.beta.environments.create({ name: 'vaulted-variable', config: e2eEnvironmentConfig({ harness: 'claude-code' }) });
      const session = await client.beta.sessions.create({ agent: agent.id, environment_id: environment.id, vault_ids: [vault.id] });

      const command = [
        'echo "VAR $DOCS_TOKEN"',
        `curl -s -o /dev/null -w "CALLED %{http_code}\\n" -X POST ${TLS_URL} -H "authorization: Bearer $DOCS_TOKEN" -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' -d '${INITIALIZE}'`,
        tokenProbe(TLS_TOKEN_HEAD, TLS_TOKEN_TAIL, TLS_HOST),
      ].join('\n');
      model.script(reply.toolCall('Bash', { command, description: 'call the docs API' }), reply.text('Called it.'));
      const [authorizations, requests] = [tlsMcp.authorizations.length, model.modelRequests.length];
      const all = await turn(session.id, 'Call the docs API.');
      const output = ((all.filter((e) => e.type === 'agent.tool_result').at(-1)?.['content'] ?? []) as { text?: string }[]).map((c) => c.text ?? '').join('\n');

      // The variable holds the placeholder; the server got the secret, so it answered 200.
      expect(output).toContain(`VAR berth-vault-placeholder-${credential.id}`);
      expect(output).toContain('CALLED 200');
      expect(tlsMcp.authorizations.slice(authorizations)).toEqual([`Bearer ${TLS_TOKEN}`]);
      expectProbeFoundNothing(output, TLS_TOKEN);
      expect(JSON.stringify(model.modelRequests[requests]?.body)).toContain('You call the docs API with curl.');
      await expectNowhere(TLS_TOKEN, TLS_TOKEN_TAIL, all, [credential], vault.id, session.id);
    },
    TURN_TIMEOUT_MS * 2,
  );

  it(
    'stops adding the token once the credential is archived: the next call reaches the server without it and is refused',
    async () => {
      const vault = await client.beta.vaults.create({ display_name: 'short-lived' });
      const credential = await client.beta.vaults.credentials.create(vault.id, { auth: { type: 'static_bearer', mcp_server_url: MCP_URL, token: TOKEN } });
      const agent = await client.beta.agents.create({
        name: 'vaulted-2',
        model: 'claude-sonnet-4-6',
        mcp_servers: [{ type: 'url', name: 'docs', url: MCP_URL }],
        tools: [{ type: 'agent_toolset_20260401' }, { type: 'mcp_toolset', mcp_server_name: 'docs' }],
      });
      const environment = await client.beta.environments.create({ name: 'vaulted-2', config: e2eEnvironmentConfig({ harness: 'claude-code' }) });
      const session = await client.beta.sessions.create({ agent: agent.id, environment_id: environment.id, vault_ids: [vault.id] });
      await client.beta.vaults.credentials.archive(credential.id, { vault_id: vault.id });

      model.script(reply.toolCall('mcp__docs__lookup', { key: 'gone' }), reply.text('Could not look it up.'));
      const seen = mcp.authorizations.length;
      const calls = mcp.calls.length;
      await turn(session.id, 'Look up gone.');
      expect(mcp.authorizations.length).toBeGreaterThan(seen);
      expect(mcp.authorizations.slice(seen).every((a) => a === null)).toBe(true);
      expect(mcp.calls.length).toBe(calls);
    },
    TURN_TIMEOUT_MS * 2,
  );
});
