import Anthropic from '@anthropic-ai/sdk';
import { AnthropicMessagesServer, lookupAnswer, OpenAiResponsesServer, reply, TestMcpServer, type ScriptedModelServer } from '@berth/testing';
import { e2eEnvironmentConfig, startE2ePlatform, waitFor, type E2ePlatform } from '../testing/e2e-platform';
import { listEvents, type PublicEvent } from '../testing/session-events';

/**
 * An agent as defined is the agent that runs, for each real harness, through the gateway with the
 * official SDK: the model request carries the agent's model id and system prompt, a disabled tool
 * is not offered, an always_ask tool waits for `user.tool_confirmation` while another runs freely
 * (Claude Code), an MCP server on the agent is called from the sandbox (Claude Code, Codex), a
 * session keeps the version it pinned, and what a harness cannot honour is a 400 at session create.
 */
type Toolset = Anthropic.Beta.Agents.BetaManagedAgentsAgentToolset20260401Params;

interface Case {
  readonly harness: 'claude-code' | 'codex' | 'pi';
  /** Which scripted server speaks this harness's model API. */
  readonly api: 'messages' | 'responses';
  /** Codex offers plain function tools only for a model id it has no metadata for. */
  readonly models: readonly [string, string];
  /** A toolset tool the agent disables, and the name the harness would offer it under. */
  readonly disabled: { tool: 'web_fetch' | 'web_search' | 'bash'; offeredAs: string };
  readonly mcpCall: { name: string; namespace?: string } | null;
}

const cases: Case[] = [
  // `claude-opus-4-1`: an id Claude Code would send as its opus alias's model if Berth let it.
  { harness: 'claude-code', api: 'messages', models: ['claude-opus-4-7', 'claude-opus-4-1'], disabled: { tool: 'web_fetch', offeredAs: 'WebFetch' }, mcpCall: { name: 'mcp__docs__lookup' } },
  { harness: 'codex', api: 'responses', models: ['berth-model', 'berth-model-2'], disabled: { tool: 'web_search', offeredAs: 'web_search' }, mcpCall: { name: 'lookup', namespace: 'mcp__docs' } },
  { harness: 'pi', api: 'messages', models: ['claude-opus-4-7', 'claude-sonnet-4-6'], disabled: { tool: 'bash', offeredAs: 'bash' }, mcpCall: null },
];

const TURN_TIMEOUT_MS = 120_000;
const offered = (body: unknown): string[] => ((body as { tools?: { name?: string }[] }).tools ?? []).map((t) => t.name ?? '');
const idle = (e: PublicEvent) => e.type === 'session.status_idle';
const stopReason = (e: PublicEvent | undefined) => (e?.['stop_reason'] as { type?: string; event_ids?: string[] } | undefined) ?? {};

// One platform for all three harnesses, on the default network (through the egress): the
// manager's default model endpoint is the Messages API server; the Codex environment points its own
// `model.base_url` at the Responses API server, a loopback endpoint the platform trusts as an
// operator would (BERTH_MODEL_TRUSTED_HOSTS). The MCP server runs on loopback too, which the egress
// refuses from a sandbox; it gets a public-looking name that the egress's upstream proxy (the
// test's "internet") serves by forwarding to it.
const MCP_HOST = 'mcp.docs.test';
const MCP_URL = `http://${MCP_HOST}/mcp`;
let messages: ScriptedModelServer;
let responses: ScriptedModelServer;
let mcp: TestMcpServer;
let platform: E2ePlatform;
let client: Anthropic;

beforeAll(async () => {
  messages = await new AnthropicMessagesServer().start();
  responses = await new OpenAiResponsesServer().start();
  mcp = await new TestMcpServer().start();
  platform = await startE2ePlatform({
    modelBaseUrl: messages.url,
    trustedModelEndpoints: [responses.url],
    upstreamHosts: { [MCP_HOST]: { origin: new URL(mcp.url).origin } },
  });
  client = new Anthropic({ apiKey: platform.apiKey, baseURL: platform.gatewayUrl, maxRetries: 0 });
}, 600_000);
afterAll(async () => {
  await platform?.stop();
  await mcp?.close();
  await messages?.close();
  await responses?.close();
}, 120_000);

describe.each(cases)('the agent as defined runs on $harness', ({ harness, api, models, disabled, mcpCall }) => {
  let model: ScriptedModelServer;
  let environmentId: string;

  beforeAll(async () => {
    model = api === 'messages' ? messages : responses;
    const endpoint = api === 'responses' ? { model: { base_url: responses.url } } : {};
    environmentId = (await client.beta.environments.create({ name: `${harness}-env`, config: e2eEnvironmentConfig({ harness, ...endpoint }) })).id;
  }, 60_000);

  const events = (sessionId: string) => listEvents(client, sessionId);
  /** Sends a message and waits for the turn's idle event (`stop` of the reason type), returning the session's events. */
  const turn = async (sessionId: string, text: string, stop = 'end_turn'): Promise<PublicEvent[]> => {
    const before = (await events(sessionId)).filter(idle).length;
    await client.beta.sessions.events.send(sessionId, { events: [{ type: 'user.message', content: [{ type: 'text', text }] }] });
    return waitFor(`a ${stop} idle on ${sessionId}`, async () => {
      const all = await events(sessionId);
      const idles = all.filter(idle);
      return idles.length > before && stopReason(idles.at(-1)).type === stop ? all : null;
    }, TURN_TIMEOUT_MS, platform.logs);
  };
  const session = (agent: { id: string; version?: number }, environment = environmentId) => client.beta.sessions.create({ agent: { type: 'agent', ...agent }, environment_id: environment });

  it('asks the model for the agent\'s model id with its system prompt, and never offers the tool it disabled', async () => {
    const toolset: Toolset = { type: 'agent_toolset_20260401', configs: [{ name: disabled.tool, enabled: false }] };
    const agent = await client.beta.agents.create({ name: 'pirate', model: models[0], system: 'You are a pirate. Answer with ahoy.', tools: [toolset] });
    const s = await session({ id: agent.id });
    model.script(reply.text('Ahoy!'));
    const requests = model.modelRequests.length;

    await turn(s.id, 'Who are you?');

    const request = model.modelRequests[requests]?.body as { model?: string };
    expect(request.model).toBe(models[0]);
    expect(JSON.stringify(request)).toContain('You are a pirate. Answer with ahoy.');
    expect(offered(request)).not.toContain(disabled.offeredAs);
    expect(offered(request).length).toBeGreaterThan(0);
  }, 300_000);

  it('runs each session on the agent version it pinned: after an update, a new session uses v2 and the older one keeps v1', async () => {
    const agent = await client.beta.agents.create({ name: 'versioned', model: models[0], system: 'You are version one.', tools: [{ type: 'agent_toolset_20260401' }] });
    const older = await session({ id: agent.id });
    const updated = await client.beta.agents.update(agent.id, { version: agent.version, model: models[1], system: 'You are version two.' });
    expect(updated.version).toBe(2);
    const newer = await session({ id: agent.id });
    expect([older.agent.version, newer.agent.version]).toEqual([1, 2]);

    const requestOf = async (sessionId: string) => {
      model.script(reply.text('ok'));
      const at = model.modelRequests.length;
      await turn(sessionId, 'Which version are you?');
      return model.modelRequests[at]?.body as { model?: string };
    };
    const v2 = await requestOf(newer.id);
    const v1 = await requestOf(older.id);
    expect(v2.model).toBe(models[1]);
    expect(JSON.stringify(v2)).toContain('You are version two.');
    expect(v1.model).toBe(models[0]);
    expect(JSON.stringify(v1)).toContain('You are version one.');
    expect(JSON.stringify(v1)).not.toContain('You are version two.');
  }, 300_000);

  if (mcpCall !== null) {
    it('calls a tool of the agent\'s MCP server from the sandbox through the egress (limited networking, allow_mcp_servers), shown as agent.mcp_tool_use and agent.mcp_tool_result', async () => {
      const endpoint = api === 'responses' ? { model: { base_url: responses.url } } : {};
      const networking = { type: 'limited', allowed_hosts: [], allow_mcp_servers: true };
      const limited = (await client.beta.environments.create({ name: `${harness}-mcp-env`, config: e2eEnvironmentConfig({ harness, networking, ...endpoint }) })).id;
      const agent = await client.beta.agents.create({
        name: 'mcp-user',
        model: models[0],
        mcp_servers: [{ type: 'url', name: 'docs', url: MCP_URL }],
        tools: [{ type: 'agent_toolset_20260401' }, { type: 'mcp_toolset', mcp_server_name: 'docs', configs: [{ name: 'shout', enabled: false }] }],
      });
      const s = await session({ id: agent.id }, limited);
      model.script(reply.toolCall(mcpCall.name, { key: 'treasure' }, mcpCall.namespace ? { namespace: mcpCall.namespace } : {}), reply.text('The treasure is 42.'));
      const calls = mcp.calls.length;

      const all = await turn(s.id, 'Look up the treasure');

      expect(mcp.calls.slice(calls).map((c) => [c.tool, c.arguments])).toEqual([['lookup', { key: 'treasure' }]]);
      // The call went out through the egress, by the server's name, to the "internet" that serves it.
      expect(platform.upstream.requests.some((r) => r.host === MCP_HOST && r.served)).toBe(true);
      const use = all.find((e) => e.type === 'agent.mcp_tool_use');
      expect(use).toMatchObject({ mcp_server_name: 'docs', name: 'lookup', input: { key: 'treasure' }, evaluated_permission: 'allow' });
      expect(all.find((e) => e.type === 'agent.mcp_tool_result')).toMatchObject({ mcp_tool_use_id: use?.id, is_error: false });
      expect(JSON.stringify(all.find((e) => e.type === 'agent.mcp_tool_result'))).toContain(lookupAnswer('treasure'));
      expect(all.some((e) => e.type === 'agent.tool_use')).toBe(false);
      const listed = await client.beta.sessions.events.list(s.id, { types: ['agent.mcp_tool_use'] } as never);
      expect(listed.data.map((e) => e.id)).toEqual([use?.id]);
    }, 300_000);
  } else {
    it('refuses an agent with MCP servers at session create: the harness has no MCP client', async () => {
      const agent = await client.beta.agents.create({ name: 'mcp-user', model: models[0], mcp_servers: [{ type: 'url', name: 'docs', url: MCP_URL }], tools: [{ type: 'mcp_toolset', mcp_server_name: 'docs' }] });
      await expect(session({ id: agent.id })).rejects.toMatchObject({ status: 400, error: { error: { code: 'VALIDATION_ERROR', details: { field: 'agent.mcp_servers' } } } });
    }, 60_000);
  }

  if (harness === 'claude-code') {
    it('holds an always_ask tool for user.tool_confirmation while another tool of the same agent runs without asking', async () => {
      const toolset: Toolset = { type: 'agent_toolset_20260401', configs: [{ name: 'bash', permission_policy: { type: 'always_ask' } }] };
      const agent = await client.beta.agents.create({ name: 'careful', model: models[0], tools: [toolset] });
      const s = await session({ id: agent.id });
      const container = `berth-s-${s.id}-g1`;
      model.script(
        reply.toolCall('Write', { file_path: '/workspace/free.txt', content: 'no question asked\n' }),
        reply.toolCall('Bash', { command: 'echo asked > /workspace/asked.txt', description: 'write asked.txt' }),
        reply.text('Both files are written.'),
      );

      const waiting = await turn(s.id, 'Write two files', 'requires_action');
      const uses = waiting.filter((e) => e.type === 'agent.tool_use');
      expect(uses.map((u) => [u['name'], u['evaluated_permission']])).toEqual([['write', 'allow'], ['bash', 'ask']]);
      expect(stopReason(waiting.filter(idle).at(-1)).event_ids).toEqual([uses[1]?.id]);
      expect(waiting.filter((e) => e.type === 'agent.tool_result').map((r) => r['tool_use_id'])).toEqual([uses[0]?.id]);
      expect((await platform.runtime.readFile(container, '/workspace/free.txt'))?.toString()).toBe('no question asked\n');
      expect(await platform.runtime.readFile(container, '/workspace/asked.txt')).toBeNull();

      await client.beta.sessions.events.send(s.id, { events: [{ type: 'user.tool_confirmation', tool_use_id: uses[1]?.id ?? '', result: 'allow' }] });
      const done = await waitFor('the turn to end', async () => {
        const all = await events(s.id);
        return stopReason(all.filter(idle).at(-1)).type === 'end_turn' ? all : null;
      }, TURN_TIMEOUT_MS, platform.logs);
      expect(done.filter((e) => e.type === 'agent.tool_result').map((r) => r['tool_use_id'])).toEqual([uses[0]?.id, uses[1]?.id]);
      expect((await platform.runtime.readFile(container, '/workspace/asked.txt'))?.toString()).toBe('asked\n');
    }, 300_000);
  } else {
    it('refuses an always_ask tool beside tools that do not ask at session create: the harness asks for every tool or none', async () => {
      const agent = await client.beta.agents.create({ name: 'careful', model: models[0], tools: [{ type: 'agent_toolset_20260401', configs: [{ name: 'bash', permission_policy: { type: 'always_ask' } }] }] });
      await expect(session({ id: agent.id })).rejects.toMatchObject({
        status: 400,
        error: { error: { details: { field: 'agent.tools.0.default_config.permission_policy' }, message: expect.stringContaining('every tool or of none') } },
      });
    }, 60_000);
  }
});
