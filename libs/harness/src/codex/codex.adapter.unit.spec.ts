import { HARNESS_SUPPORT, type AgentCreateParams } from '@berth/contracts';
import { testAgentConfig } from '@berth/contracts/testing';
import type { TurnInput } from '../harness-adapter.port';
import { replay, summarize } from '../testing/replay-fixture';
import { CODEX_TOOL_ITEMS, CodexAdapter } from './codex.adapter';
import askAllowed from './fixtures/ask-allowed.stdout.json';
import askDenied from './fixtures/ask-denied.stdout.json';
import customToolAsk from './fixtures/custom-tool-ask.stdout.json';
import customToolTurn from './fixtures/custom-tool-turn.stdout.json';
import interrupted from './fixtures/interrupted-turn.stdout.json';
import mcpTurn from './fixtures/mcp-turn.stdout.json';
import modelError from './fixtures/model-error.stdout.json';
import resumed from './fixtures/resumed-turn.stdout.json';
import toolTurn from './fixtures/tool-turn.stdout.json';

const adapter = new CodexAdapter();
const input: TurnInput = {
  prompt: '-p looks like a flag',
  agent: testAgentConfig({ model: 'berth-model' }),
  resumeId: null,
  model: { baseUrl: 'http://model.internal:8080', apiKeyEnv: 'BERTH_MODEL_API_KEY' },
  cwd: '/workspace',
  home: '/home/agent',
};
const configOf = (agent: Partial<AgentCreateParams>) => adapter.buildTurn({ ...input, agent: testAgentConfig({ model: 'berth-model', ...agent }) }).files[0]?.content ?? '';

describe('CodexAdapter.buildTurn', () => {
  it('runs codex exec --json with the prompt after --, and a custom Responses provider in config.toml', () => {
    const plan = adapter.buildTurn(input);

    expect(plan.argv).toEqual(['codex', 'exec', '--json', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', '--', '-p looks like a flag']);
    expect(plan.env).toEqual({ HOME: '/home/agent', CODEX_HOME: '/home/agent/.codex' });
    expect(plan.files).toHaveLength(1);
    expect(plan.files[0]?.path).toBe('/home/agent/.codex/config.toml');
    expect(plan.files[0]?.content).toContain('base_url = "http://model.internal:8080/v1"');
    expect(plan.files[0]?.content).toContain('env_key = "BERTH_MODEL_API_KEY"');
    expect(plan.files[0]?.content).toContain('wire_api = "responses"');
    expect(plan.files[0]?.content).toContain('request_max_retries = 2');
    expect(plan.secretEnv).toEqual({ BERTH_MODEL_API_KEY: 'BERTH_MODEL_API_KEY' });
    expect(plan.keepStdinOpen).toBe(false);
  });

  it('asks for the agent\'s model id with its effort and, for fast, the fast service tier', () => {
    expect(configOf({ model: 'gpt-5.5' })).toContain('model = "gpt-5.5"');
    expect(configOf({ model: { id: 'gpt-5.5', effort: 'xhigh' } })).toContain('model_reasoning_effort = "xhigh"');
    expect(configOf({ model: { id: 'gpt-5.5', speed: 'fast' } })).toContain('service_tier = "fast"');
    expect(configOf({ model: 'gpt-5.5' })).not.toMatch(/model_reasoning_effort|service_tier/);
  });

  it('passes the agent system prompt as developer_instructions', () => {
    expect(configOf({ system: 'Say "hi"' })).toContain('developer_instructions = "Say \\"hi\\""');
    expect(configOf({})).not.toContain('developer_instructions');
  });

  it('turns its shell (bash, read, write, edit, glob, grep) and web search off when the agent disables them', () => {
    expect(configOf({})).not.toMatch(/shell_tool|web_search/);
    const off = configOf({ tools: [{ type: 'agent_toolset_20260401', default_config: { enabled: false } }] });
    expect(off).toContain('web_search = "disabled"');
    expect(off).toMatch(/\[features\]\nshell_tool = false\nunified_exec = false/);
    expect(configOf({ tools: [] })).toContain('shell_tool = false');
    expect(Object.values(CODEX_TOOL_ITEMS).every((name) => HARNESS_SUPPORT.codex.tools.includes(name))).toBe(true);
  });

  it('configures the agent\'s MCP servers with the tools it offers, and 30 s to start that the turn waits for (not 10 s, and 1 s)', () => {
    const servers = { mcp_servers: [{ type: 'url' as const, name: 'docs', url: 'https://mcp.example/mcp' }, { type: 'url' as const, name: 'only', url: 'http://127.0.0.1:9/mcp' }] };
    const config = configOf({
      ...servers,
      tools: [
        { type: 'mcp_toolset', mcp_server_name: 'docs', configs: [{ name: 'shout', enabled: false }] },
        { type: 'mcp_toolset', mcp_server_name: 'only', default_config: { enabled: false }, configs: [{ name: 'lookup', enabled: true }] },
      ],
    });
    expect(config).toContain('[mcp_servers."docs"]\nurl = "https://mcp.example/mcp"\nstartup_timeout_sec = 30\ndisabled_tools = ["shout"]');
    expect(config).toContain('[mcp_servers."only"]\nurl = "http://127.0.0.1:9/mcp"\nstartup_timeout_sec = 30\nenabled_tools = ["lookup"]');
    expect(config.split('\n[')[0]).toContain('mcp_optional_startup_grace_ms = 30000');
    expect(configOf({})).not.toContain('mcp_optional_startup_grace_ms');
    expect(configOf({ ...servers, tools: [{ type: 'mcp_toolset', mcp_server_name: 'docs', default_config: { enabled: false } }] })).not.toContain('mcp_servers');
  });

  it('resumes with exec resume <thread id>', () => {
    expect(adapter.buildTurn({ ...input, resumeId: 'thread-1' }).argv.slice(5)).toEqual(['resume', 'thread-1', '--', '-p looks like a flag']);
  });

  const askingAgent = testAgentConfig({ model: 'berth-model', tools: [{ type: 'agent_toolset_20260401', default_config: { permission_policy: { type: 'always_ask' } } }] });

  it('for an agent whose tools ask runs codex app-server: initialize, then a thread that asks before untrusted commands, stdin kept open', () => {
    const plan = adapter.buildTurn({ ...input, agent: askingAgent });
    expect(plan.argv).toEqual(['codex', 'app-server']);
    expect(plan.keepStdinOpen).toBe(true);
    expect(plan.files[0]?.content).toContain('wire_api = "responses"');
    expect(plan.stdinLines.map((l) => JSON.parse(l))).toEqual([
      { method: 'initialize', id: 1, params: { clientInfo: { name: 'berth', title: 'Berth', version: '1' }, capabilities: null } },
      { method: 'initialized' },
      { method: 'thread/start', id: 2, params: { cwd: '/workspace', approvalPolicy: 'untrusted', sandbox: 'danger-full-access' } },
    ]);
    // The prompt is not on the command line or in the opening: it follows once the thread is known.
    expect(JSON.stringify(plan)).not.toContain('-p looks like a flag');
    expect(JSON.parse(adapter.buildTurn({ ...input, agent: askingAgent, resumeId: 'thread-1' }).stdinLines[2] ?? '{}')).toMatchObject({
      method: 'thread/resume',
      params: { threadId: 'thread-1', approvalPolicy: 'untrusted' },
    });
  });
});

describe('CodexAdapter.parseLine over recorded codex 0.171.0 app-server output (always_ask)', () => {
  it('sends the prompt once the thread is open, holds the command for approval, then shows its result and the answer', () => {
    const run = replay(adapter, askAllowed, 'always_ask', 'write asked.txt');

    expect(summarize(run.outputs)).toEqual(['tool_use:bash:ask', 'tool_result', 'message:after allow', 'usage']);
    expect(run.outputs[0]).toMatchObject({ input: { command: 'echo asked > asked.txt' } });
    const [threadId] = run.sessionIds;
    expect(run.stdinLines.map((l) => JSON.parse(l))).toEqual([{ method: 'turn/start', id: 3, params: { threadId, input: [{ type: 'text', text: 'write asked.txt' }] } }]);
    expect(run.confirmations).toEqual([{ toolUseId: (run.outputs[0] as { tool_use_id: string }).tool_use_id, requestId: '0', input: { command: 'echo asked > asked.txt' } }]);
    expect(run.terminal).toEqual({ ok: true, interrupted: false, error: null });
    expect(run.outputs.at(-1)).toMatchObject({ kind: 'usage', usage: { output_tokens: expect.any(Number) } });
  });

  it('answers an approval request by echoing its id with accept or decline', () => {
    const pending = { toolUseId: 'call_1', requestId: '0', input: {} };
    expect(JSON.parse(adapter.answerConfirmation(pending, { result: 'allow', denyMessage: null }))).toEqual({ id: 0, result: { decision: 'accept' } });
    expect(JSON.parse(adapter.answerConfirmation({ ...pending, requestId: '"r-7"' }, { result: 'deny', denyMessage: 'no' }))).toEqual({ id: 'r-7', result: { decision: 'decline' } });
  });

  it('shows a declined command as an error result and the turn still ends normally', () => {
    const run = replay(adapter, askDenied, 'always_ask', 'write asked.txt');
    expect(summarize(run.outputs)).toEqual(['tool_use:bash:ask', 'tool_result:error', 'message:after deny', 'usage']);
    expect(run.terminal).toEqual({ ok: true, interrupted: false, error: null });
  });
});

describe('CodexAdapter.parseLine over recorded codex 0.171.0 output', () => {
  it('maps a tool turn to thinking, messages, the command as a tool use with its result, and usage', () => {
    const run = replay(adapter, toolTurn);

    expect(summarize(run.outputs)).toEqual([
      'thinking',
      'message:Writing the file.',
      'tool_use:bash',
      'tool_result',
      'message:The file is written.',
      'usage',
    ]);
    expect(run.outputs[2]).toMatchObject({ tool_use_id: 'item_3', input: { command: "/bin/bash -lc 'echo hello > out.txt'" } });
    expect(run.outputs[3]).toMatchObject({ tool_use_id: 'item_3', is_error: false });
    expect(run.outputs[5]).toEqual({
      kind: 'usage',
      usage: { input_tokens: 20383, output_tokens: 169, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    });
    expect(run.sessionIds).toEqual(['01a23370-7454-7f52-b3da-099e7e3496ad']);
    expect(run.terminal).toEqual({ ok: true, interrupted: false, error: null });
  });

  it('continues the same thread on resume', () => {
    const run = replay(adapter, resumed);
    expect(run.sessionIds).toEqual(replay(adapter, toolTurn).sessionIds);
    expect(summarize(run.outputs)).toEqual(['message:You asked me to write out.txt.', 'usage']);
  });

  it('reports turn.failed as a failed turn with the model error', () => {
    const run = replay(adapter, modelError);
    expect(run.terminal).toMatchObject({ ok: false, interrupted: false });
    expect(run.terminal?.error).toContain('scripted bad request');
  });

  it('has no terminal line when interrupted (SIGINT): the runner, which sent it, ends the turn', () => {
    expect(replay(adapter, interrupted).terminal).toBeNull();
    expect(adapter.interruptLine()).toBeNull();
  });

  it('counts cached input apart, as Managed Agents usage does', () => {
    const line = JSON.stringify({ type: 'turn.completed', usage: { input_tokens: 100, cached_input_tokens: 60, output_tokens: 5 } });
    expect(adapter.parseLine(line, adapter.initialState('always_allow')).outputs).toEqual([
      { kind: 'usage', usage: { input_tokens: 40, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 60 } },
    ]);
  });

  it('marks a failing command as an error result and reports file changes', () => {
    const lines = [
      JSON.stringify({ type: 'item.completed', item: { id: 'item_1', type: 'command_execution', command: 'false', aggregated_output: 'nope', exit_code: 1, status: 'failed' } }),
      JSON.stringify({ type: 'item.completed', item: { id: 'item_2', type: 'file_change', changes: [{ path: 'a.txt', kind: 'add' }], status: 'completed' } }),
    ];
    const run = replay(adapter, lines);
    expect(summarize(run.outputs)).toEqual(['tool_use:bash', 'tool_result:error', 'tool_use:edit', 'tool_result']);
    expect(run.outputs[3]).toMatchObject({ content: [{ type: 'text', text: 'add a.txt' }] });
  });

  it('reports a call of an MCP tool as mcp_tool_use and mcp_tool_result, named by server and tool', () => {
    // The item shapes codex 0.171.0 printed calling the testing library's MCP server.
    const call = { id: 'item_1', type: 'mcp_tool_call', server: 'docs', tool: 'lookup', arguments: { key: 'k9' }, error: null };
    const lines = [
      JSON.stringify({ type: 'item.started', item: { ...call, result: null, status: 'in_progress' } }),
      JSON.stringify({ type: 'item.completed', item: { ...call, result: { content: [{ type: 'text', text: 'the value of k9 is 42' }], structured_content: null }, status: 'completed' } }),
    ];
    expect(summarize(replay(adapter, mcpTurn).outputs)).toEqual(['mcp_tool_use:docs.lookup', 'mcp_tool_result', 'message:Found it.', 'usage']);
    const run = replay(adapter, lines);
    expect(summarize(run.outputs)).toEqual(['mcp_tool_use:docs.lookup', 'mcp_tool_result']);
    expect(run.outputs[0]).toMatchObject({ input: { key: 'k9' } });
    expect(run.outputs[1]).toMatchObject({ tool_use_id: 'item_1', content: [{ type: 'text', text: 'the value of k9 is 42' }], is_error: false });
  });

  it('finds the rollout by thread id under CODEX_HOME/sessions', () => {
    expect(adapter.transcriptLocations('/home/agent', '/workspace', 't1')).toEqual([
      { dir: '/home/agent/.codex/sessions', nameEndsWith: '-t1.jsonl', recursive: true },
    ]);
  });
});

describe('CodexAdapter: custom tools', () => {
  const WEATHER = { type: 'custom' as const, name: 'get_weather', description: 'The weather in a city', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } } };
  const withWeather = testAgentConfig({ model: 'berth-model', tools: [{ type: 'agent_toolset_20260401' }, WEATHER] });

  it("offers the agent's custom tools through Berth's stdio MCP server in the sandbox, with a day to wait for each call", () => {
    const plan = adapter.buildTurn({ ...input, agent: withWeather });
    const config = plan.files[0]?.content ?? '';
    expect(config).toContain(
      [
        '[mcp_servers."berth"]',
        'command = "node"',
        'args = ["/home/agent/.berth/custom-tools/server.mjs", "/home/agent/.berth/custom-tools/tools.json", "/run/berth/tools.sock"]',
        'startup_timeout_sec = 30',
        'required = true',
        // Codex cuts an MCP call off at tool_timeout_sec (verified with 0.171.0: 3 s set, the call failed after 3 s).
        'tool_timeout_sec = 86400',
      ].join('\n'),
    );
    expect(plan.files.map((f) => f.path)).toEqual(['/home/agent/.codex/config.toml', '/home/agent/.berth/custom-tools/server.mjs', '/home/agent/.berth/custom-tools/client.mjs', '/home/agent/.berth/custom-tools/tools.json']);
    expect(JSON.parse(plan.files[3]?.content ?? '[]')).toEqual([{ name: 'get_weather', description: 'The weather in a city', inputSchema: WEATHER.input_schema }]);
    expect(configOf({})).not.toContain('berth"]');
  });

  it('reads a call of the berth server as custom_tool_use and drops its MCP result (the client sent it), over recorded codex 0.171.0 exec output', () => {
    const run = replay(adapter, customToolTurn);
    expect(run.outputs).toEqual([
      { kind: 'custom_tool_use', tool_use_id: 'item_1', name: 'get_weather', input: { city: 'Oslo' } },
      { kind: 'message', content: [{ type: 'text', text: 'It is sunny.' }] },
      expect.objectContaining({ kind: 'usage' }),
    ]);
    expect(run.terminal).toEqual({ ok: true, interrupted: false, error: null });
  });

  it('in app-server (always_ask) accepts the approval Codex asks before a custom tool call, and reads the call the same way', () => {
    const run = replay(adapter, customToolAsk, 'always_ask', 'weather in Oslo?');
    expect(summarize(run.outputs)).toEqual(['custom_tool_use', 'message:It is sunny.', 'usage']);
    expect(run.outputs[0]).toMatchObject({ name: 'get_weather', input: { city: 'Oslo' } });
    expect(run.confirmations).toEqual([]);
    const [threadId] = run.sessionIds;
    expect(run.stdinLines.map((l) => JSON.parse(l))).toEqual([
      { method: 'turn/start', id: 3, params: { threadId, input: [{ type: 'text', text: 'weather in Oslo?' }] } },
      { id: 0, result: { action: 'accept', content: {} } },
    ]);
    // Another server's elicitation is not answered for the user.
    const other = JSON.stringify({ method: 'mcpServer/elicitation/request', id: 5, params: { serverName: 'docs', mode: 'form' } });
    expect(adapter.parseLine(other, adapter.initialState('always_ask')).stdinLines).toBeUndefined();
  });
});
