import Anthropic from '@anthropic-ai/sdk';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { AnthropicMessagesServer, lookupAnswer, reply, TestMcpServer } from '@berth/testing';
// eslint-disable-next-line @nx/enforce-module-boundaries -- test support shared with the sandbox-manager's e2e specs
import { e2eEnvironmentConfig, startE2ePlatform, waitFor, type E2ePlatform } from '../../../sandbox-manager/src/testing/e2e-platform';
// eslint-disable-next-line @nx/enforce-module-boundaries -- test support shared with the sandbox-manager's e2e specs
import { listEvents, type PublicEvent } from '../../../sandbox-manager/src/testing/session-events';

/**
 * A vault credential used as Managed Agents users use one: a bearer token for an MCP server is
 * stored once with the official SDK, a session names the vault, and the real Claude Code CLI in a
 * sandbox on the default network calls the server, which answers only that token. The egress adds
 * it on the way out, so the token is in none of the sandbox's files, its environment, the journal,
 * the events or the logs, and the vault API never answers it.
 */

const TURN_TIMEOUT_MS = 120_000;
// Made of two halves so that the probe command (which the journal records) can look for the whole
// token without containing it.
const TOKEN_HEAD = `mcp-bearer-${randomBytes(6).toString('hex')}`;
const TOKEN_TAIL = randomBytes(10).toString('hex');
const TOKEN = `${TOKEN_HEAD}${TOKEN_TAIL}`;
const MCP_HOST = 'mcp.vaulted.test';
const MCP_URL = `http://${MCP_HOST}/mcp`;

describe('a session with a vault calls its MCP server with the bearer token it never sees', () => {
  let model: AnthropicMessagesServer;
  let mcp: TestMcpServer;
  let platform: E2ePlatform;
  let client: Anthropic;

  beforeAll(async () => {
    model = await new AnthropicMessagesServer().start();
    mcp = await new TestMcpServer({ bearerToken: TOKEN }).start();
    platform = await startE2ePlatform({
      modelBaseUrl: model.url,
      // The MCP server runs on loopback; the egress's upstream proxy serves it under a public-looking name.
      upstreamHosts: { [MCP_HOST]: { origin: new URL(mcp.url).origin } },
      // The key ring the gateway seals credentials with and the egress opens them with.
      env: { BERTH_SECRET_KEYS: `e2e:${randomBytes(32).toString('base64')}` },
    });
    client = new Anthropic({ apiKey: platform.apiKey, baseURL: platform.gatewayUrl, maxRetries: 0 });
  }, 900_000);
  afterAll(async () => {
    await platform?.stop();
    await mcp?.close();
    await model?.close();
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
      const probe = [
        // Bash joins the two quoted halves; the command text never holds them side by side.
        `t="${TOKEN_HEAD}"'${TOKEN_TAIL}'; echo "TOKEN-LENGTH \${#t}"`,
        'for d in / /home /workspace /tmp /mnt /run /etc /var /opt /root; do [ -d "$d" ] && echo "SCANNED $d"; done',
        // The pattern comes from a pipe (printf is a builtin), so no grep process holds the token in its arguments.
        'grep -r -a -l -F -s -f <(printf "%s\\n" "$t") /home /workspace /tmp /mnt /run /etc /var /opt /root 2>/dev/null | sed "s/^/FOUND-FILE /"; echo FILES-END',
        'env | grep -c -F -f <(printf "%s\\n" "$t") | sed "s/^/ENV-HITS /"',
        'for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do tr "\\0" "\\n" < "$f" 2>/dev/null; done | grep -c -F -f <(printf "%s\\n" "$t") | sed "s/^/PROC-HITS /"',
        'for f in /proc/[0-9]*/cmdline; do tr "\\0" " " < "$f" 2>/dev/null; echo; done | grep -c -F "mcp.vaulted.test" | sed "s/^/MCP-CONFIG-SEEN /"',
      ].join('\n');
      model.script(reply.toolCall('Bash', { command: probe, description: 'look for the token' }), reply.text('Nothing found.'));
      const all = await turn(session.id, 'Look around.');
      const output = ((all.filter((e) => e.type === 'agent.tool_result').at(-1)?.['content'] ?? []) as { text?: string }[]).map((c) => c.text ?? '').join('\n');
      expect(output).toContain(`TOKEN-LENGTH ${TOKEN.length}`);
      expect(output).toContain('SCANNED /home');
      expect(output).toContain('FILES-END');
      expect(output).not.toContain('FOUND-FILE');
      expect(output).toContain('ENV-HITS 0');
      expect(output).toContain('PROC-HITS 0');
      // The probe can see the harness's arguments (so PROC-HITS 0 is a real search): the MCP URL is there, the token is not.
      expect(output).toMatch(/MCP-CONFIG-SEEN [1-9]/);

      // The events, the journal (every file of the store, its WAL included), the logs, the model's context.
      expect(JSON.stringify(all)).not.toContain(TOKEN);
      const storeFiles = readdirSync(dirname(platform.storePath)).filter((f) => f.startsWith(basename(platform.storePath)));
      expect(storeFiles.length).toBeGreaterThan(0);
      for (const file of storeFiles) expect([file, readFileSync(join(dirname(platform.storePath), file)).includes(TOKEN)]).toEqual([file, false]);
      expect(platform.logs()).not.toContain(TOKEN);
      expect(platform.logs()).not.toContain(TOKEN_TAIL);
      expect(JSON.stringify(model.modelRequests)).not.toContain(TOKEN);

      // The vault API never answers it.
      const answers = [
        JSON.stringify(credential),
        JSON.stringify(await client.beta.vaults.credentials.retrieve(credential.id, { vault_id: vault.id })),
        JSON.stringify(await client.beta.vaults.credentials.list(vault.id)),
        JSON.stringify(await client.beta.vaults.retrieve(vault.id)),
        JSON.stringify(await client.beta.sessions.retrieve(session.id)),
      ];
      for (const answer of answers) expect(answer).not.toContain(TOKEN);
    },
    TURN_TIMEOUT_MS * 3,
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
