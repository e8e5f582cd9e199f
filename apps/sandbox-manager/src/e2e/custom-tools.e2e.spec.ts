import Anthropic from '@anthropic-ai/sdk';
import { AnthropicMessagesServer, OpenAiResponsesServer, reply, type ScriptedModelServer } from '@berth/testing';
import { e2eEnvironmentConfig, startE2ePlatform, waitFor, type E2ePlatform } from '../testing/e2e-platform';
import { listEvents, type PublicEvent } from '../testing/session-events';

/**
 * Custom tools end to end, with each real harness CLI that can take them (Claude Code, Codex, Pi) in a
 * sandbox on the default network and the official SDK as the client: the model calls the agent's
 * custom tool, the client sees `agent.custom_tool_use` and `requires_action`, answers with
 * `user.custom_tool_result`, and the same turn continues with that result in the model's next
 * request. The call reaches the platform through Berth's stdio MCP server in the sandbox (Pi: Berth's
 * extension) and the sandbox's tools socket (no network path). Also: 409s for a result nobody waits for, the wait
 * surviving a kill -9 of the sandbox-manager (the answer is sent while no manager runs), and an
 * interrupt ending the wait.
 */

const TURN_TIMEOUT_MS = 120_000;
const WEATHER_TOOL = {
  type: 'custom' as const,
  name: 'get_weather',
  description: 'The current weather in a city, from the application.',
  input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] },
};

type StopReason = { type?: string; event_ids?: string[] };
const stopReason = (e: PublicEvent | undefined): StopReason => (e?.['stop_reason'] as StopReason | undefined) ?? {};
const lastIdle = (events: readonly PublicEvent[]) => events.filter((e) => e.type === 'session.status_idle').at(-1);

type ToolResultText = { tool_use_id: string | undefined; text: string | undefined };
type OfferedTool = { description?: string; schema?: unknown };

type ModelMessage = { role: string; content: string | { type: string; tool_use_id?: string; content?: unknown }[] };
/**
 * Messages API: the tool results of a request's last user message as (tool_use_id, first text):
 * Claude Code ends an MCP text with a newline and appends a `<system-reminder>` block of its own.
 */
const messagesResults = (body: unknown): ToolResultText[] => {
  const last = ((body as { messages?: ModelMessage[] }).messages ?? []).at(-1);
  const results = last === undefined || typeof last.content === 'string' ? [] : last.content.filter((b) => b.type === 'tool_result');
  return results.map((r) => ({ tool_use_id: r.tool_use_id, text: (Array.isArray(r.content) ? (r.content[0] as { text?: string } | undefined)?.text : r.content)?.toString().trim() }));
};
type ResponsesItem = { type: string; call_id?: string; output?: unknown };
/**
 * Responses API: the `function_call_output` items of a request as (call_id, text of the result):
 * Codex sends an MCP result as content items after one of its own (`Wall time: … Output:`).
 */
const responsesResults = (body: unknown): ToolResultText[] =>
  ((body as { input?: ResponsesItem[] }).input ?? [])
    .filter((i) => i.type === 'function_call_output')
    .map((i) => ({ tool_use_id: i.call_id, text: (Array.isArray(i.output) ? (i.output.at(-1) as { text?: string } | undefined)?.text : String(i.output))?.trim() }));

type HarnessCase = Readonly<{
  harness: 'claude-code' | 'codex' | 'pi';
  model: string;
  /** How the model calls the custom tool (Berth's MCP server is named `berth`). */
  call: Readonly<{ name: string; namespace?: string }>;
  server: () => ScriptedModelServer;
  /** The model endpoint the environment names (Claude Code uses the platform's default, the Messages API). */
  endpoint: (url: string) => Record<string, unknown>;
  results: (body: unknown) => ToolResultText[];
  offered: (body: unknown) => OfferedTool | undefined;
}>;

const cases: HarnessCase[] = [
  {
    harness: 'claude-code',
    model: 'claude-sonnet-4-5',
    call: { name: 'mcp__berth__get_weather' },
    server: () => new AnthropicMessagesServer(),
    endpoint: () => ({}),
    results: messagesResults,
    offered: (body) => {
      const tool = ((body as { tools?: { name: string; description?: string; input_schema?: unknown }[] }).tools ?? []).find((t) => t.name === 'mcp__berth__get_weather');
      return tool && { description: tool.description, schema: tool.input_schema };
    },
  },
  {
    harness: 'codex',
    // A model id Codex has no metadata for: it offers plain function tools (and MCP servers as namespaces).
    model: 'berth-model',
    call: { name: 'get_weather', namespace: 'mcp__berth' },
    server: () => new OpenAiResponsesServer(),
    endpoint: (url) => ({ model: { base_url: url } }),
    results: responsesResults,
    offered: (body) => {
      type Fn = { name: string; description?: string; parameters?: unknown };
      const namespace = ((body as { tools?: { type: string; name?: string; tools?: Fn[] }[] }).tools ?? []).find((t) => t.name === 'mcp__berth');
      const tool = namespace?.tools?.find((t) => t.name === 'get_weather');
      return tool && { description: tool.description, schema: tool.parameters };
    },
  },
  {
    harness: 'pi',
    model: 'claude-sonnet-4-5',
    call: { name: 'berth__get_weather' },
    server: () => new AnthropicMessagesServer(),
    endpoint: (url) => ({ model: { base_url: url } }),
    results: messagesResults,
    offered: (body) => {
      const tool = ((body as { tools?: { name: string; description?: string; input_schema?: unknown }[] }).tools ?? []).find((t) => t.name === 'berth__get_weather');
      return tool && { description: tool.description, schema: tool.input_schema };
    },
  },
];

let platform: E2ePlatform;
let client: Anthropic;
const servers = new Map<HarnessCase['harness'], ScriptedModelServer>();

beforeAll(async () => {
  for (const c of cases) servers.set(c.harness, await c.server().start());
  const urls = [...servers.values()].map((s) => s.url);
  // The environments name their own (loopback) model endpoints: trusted as an operator would (BERTH_MODEL_TRUSTED_HOSTS).
  platform = await startE2ePlatform({ modelBaseUrl: servers.get('claude-code')?.url ?? '', trustedModelEndpoints: urls });
  client = new Anthropic({ apiKey: platform.apiKey, baseURL: platform.gatewayUrl, maxRetries: 0 });
}, 600_000);
afterAll(async () => {
  await platform?.stop();
  for (const server of servers.values()) await server.close();
}, 120_000);

describe.each(cases)('custom tools on $harness (real CLI, default network, official SDK)', ({ harness, model: modelId, call, endpoint, results, offered: offeredIn }) => {
  let model: ScriptedModelServer;
  let environmentId: string;
  const toolCall = (input: Record<string, unknown>, options: { id: string; text?: string }) => reply.toolCall(call.name, input, { ...options, ...(call.namespace === undefined ? {} : { namespace: call.namespace }) });

  beforeAll(async () => {
    const server = servers.get(harness);
    if (server === undefined) throw new Error(`no model server for ${harness}`);
    model = server;
    environmentId = (await client.beta.environments.create({ name: `custom-tools-${harness}`, config: e2eEnvironmentConfig({ harness, ...endpoint(model.url) }) })).id;
  }, 60_000);

  const newSession = async () => {
    const agent = await client.beta.agents.create({
      name: 'weather',
      model: modelId,
      system: 'Use get_weather for weather questions.',
      tools: [{ type: 'agent_toolset_20260401' }, WEATHER_TOOL],
    });
    return client.beta.sessions.create({ agent: agent.id, environment_id: environmentId });
  };
  const send = (sessionId: string, events: Anthropic.Beta.Sessions.BetaManagedAgentsEventParams[]) => client.beta.sessions.events.send(sessionId, { events });
  const ask = (sessionId: string, text: string) => send(sessionId, [{ type: 'user.message', content: [{ type: 'text', text }] }]);
  const untilIdle = (sessionId: string, stop: string, after = 0) =>
    waitFor(`an idle ${stop} on ${sessionId}`, async () => {
      const events = await listEvents(client, sessionId);
      const idles = events.filter((e) => e.type === 'session.status_idle');
      return idles.length > after && stopReason(idles.at(-1)).type === stop ? events : null;
    }, TURN_TIMEOUT_MS, platform.logs);
  /** The SDK's error for a refused send: its status and Berth's error body. */
  const refusal = async (sessionId: string, events: Anthropic.Beta.Sessions.BetaManagedAgentsEventParams[]) => {
    const error = await send(sessionId, events).then(() => null, (e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.APIError);
    const api = error as InstanceType<typeof Anthropic.APIError>;
    return { status: api.status, error: (api.error as { error?: { code?: string; details?: Record<string, unknown> } }).error };
  };

  it('the model calls the custom tool; the client sees agent.custom_tool_use and requires_action, answers, and the same turn ends end_turn with the result in the next model request', async () => {
    const session = await newSession();
    const before = model.modelRequests.length;
    model.script(toolCall({ city: 'Oslo' }, { id: 'toolu_weather_1', text: 'Let me check.' }), reply.text('It is sunny in Oslo, 21°C.'));
    await ask(session.id, 'What is the weather in Oslo?');

    const waiting = await untilIdle(session.id, 'requires_action');
    const use = waiting.find((e) => e.type === 'agent.custom_tool_use');
    expect(use).toMatchObject({ type: 'agent.custom_tool_use', name: 'get_weather', input: { city: 'Oslo' } });
    expect(stopReason(lastIdle(waiting)).event_ids).toEqual([use?.id]);
    // The custom tool call is not also shown as an MCP call of the `berth` server.
    expect(waiting.some((e) => e.type === 'agent.mcp_tool_use' || e.type === 'agent.mcp_tool_result')).toBe(false);
    // The model was offered the tool with the agent's description and input schema.
    expect(offeredIn(model.modelRequests[before]?.body)).toMatchObject({ description: WEATHER_TOOL.description, schema: { properties: { city: { type: 'string' } } } });
    expect((await client.beta.sessions.retrieve(session.id)).status).toBe('idle');

    const sent = await send(session.id, [{ type: 'user.custom_tool_result', custom_tool_use_id: use?.id ?? '', content: [{ type: 'text', text: 'sunny, 21°C' }] }]);
    expect(sent.data?.[0]).toMatchObject({ type: 'user.custom_tool_result', custom_tool_use_id: use?.id, content: [{ type: 'text', text: 'sunny, 21°C' }] });

    const done = await untilIdle(session.id, 'end_turn');
    expect(done.filter((e) => e.type === 'session.status_idle').map((e) => stopReason(e).type)).toEqual(['requires_action', 'end_turn']);
    const next = model.modelRequests[before + 1]?.body;
    expect(results(next)).toEqual([{ tool_use_id: 'toolu_weather_1', text: 'sunny, 21°C' }]);
    expect(JSON.stringify(done.filter((e) => e.type === 'agent.message').at(-1))).toContain('sunny in Oslo');
    expect(model.modelRequests.length - before).toBe(2);

    // One answer per call: a second result for it, or one for an id nobody waits on, is a 409.
    const again = await refusal(session.id, [{ type: 'user.custom_tool_result', custom_tool_use_id: use?.id ?? '', content: [{ type: 'text', text: 'rain' }] }]);
    expect(again).toMatchObject({ status: 409, error: { code: 'CUSTOM_TOOL_USE_NOT_PENDING', details: { custom_tool_use_id: use?.id } } });
    const unknown = await refusal(session.id, [{ type: 'user.custom_tool_result', custom_tool_use_id: 'sevt_nothing_0' }]);
    expect(unknown).toMatchObject({ status: 409, error: { code: 'CUSTOM_TOOL_USE_NOT_PENDING', details: { reason: 'unknown' } } });
  }, 300_000);

  it('a custom tool result sent while the sandbox-manager is down (kill -9) reaches the waiting harness after its restart, and the turn completes', async () => {
    const session = await newSession();
    const before = model.modelRequests.length;
    model.script(toolCall({ city: 'Bergen' }, { id: 'toolu_weather_2' }), reply.text('Bergen has rain.'));
    await ask(session.id, 'What is the weather in Bergen?');
    const waiting = await untilIdle(session.id, 'requires_action');
    const useId = stopReason(lastIdle(waiting)).event_ids?.[0] ?? '';

    await platform.killManager();
    await send(session.id, [{ type: 'user.custom_tool_result', custom_tool_use_id: useId, content: [{ type: 'text', text: 'rain, 9°C' }] }]);
    await platform.startManager({});

    const done = await untilIdle(session.id, 'end_turn');
    expect(results(model.modelRequests[before + 1]?.body)).toEqual([{ tool_use_id: 'toolu_weather_2', text: 'rain, 9°C' }]);
    expect(done.filter((e) => e.type === 'agent.custom_tool_use')).toHaveLength(1);
    expect(JSON.stringify(done.filter((e) => e.type === 'agent.message').at(-1))).toContain('Bergen has rain');
    // The new manager followed the same harness process, whose MCP server asked again.
    expect(platform.manager().output()).toContain('reattaching (harness still running)');
    expect(model.modelRequests.length - before).toBe(2);
  }, 300_000);

  it('an interrupt while a custom tool call waits ends the turn (end_turn); a late result is a 409', async () => {
    const session = await newSession();
    const before = model.modelRequests.length;
    model.script(toolCall({ city: 'Tromsø' }, { id: 'toolu_weather_3' }));
    await ask(session.id, 'What is the weather in Tromsø?');
    const waiting = await untilIdle(session.id, 'requires_action');
    const useId = stopReason(lastIdle(waiting)).event_ids?.[0] ?? '';

    await send(session.id, [{ type: 'user.interrupt' }]);
    await untilIdle(session.id, 'end_turn', 1);
    const late = await refusal(session.id, [{ type: 'user.custom_tool_result', custom_tool_use_id: useId, content: [{ type: 'text', text: 'snow' }] }]);
    expect(late).toMatchObject({ status: 409, error: { code: 'CUSTOM_TOOL_USE_NOT_PENDING' } });
    expect(model.modelRequests.length - before).toBe(1);

    // The session goes on: the next message runs a turn of its own.
    model.script(reply.text('Ready.'));
    await ask(session.id, 'Still there?');
    const next = await untilIdle(session.id, 'end_turn', 2);
    expect(JSON.stringify(next.filter((e) => e.type === 'agent.message').at(-1))).toContain('Ready.');
  }, 300_000);
});
