import { HARNESS_SUPPORT, type AgentCreateParams } from '@berth/contracts';
import { testAgentConfig } from '@berth/contracts/testing';
import type { TurnInput } from '../harness-adapter.port';
import { replay, summarize } from '../testing/replay-fixture';
import { CLAUDE_TOOL_NAMES, ClaudeCodeAdapter } from './claude-code.adapter';
import { claudeProjectKey } from './claude-project-key';
import askAllowed from './fixtures/ask-allowed.stdout.json';
import askDenied from './fixtures/ask-denied.stdout.json';
import customToolTurn from './fixtures/custom-tool-turn.stdout.json';
import interrupted from './fixtures/interrupted-turn.stdout.json';
import mcpTurn from './fixtures/mcp-turn.stdout.json';
import modelError from './fixtures/model-error.stdout.json';
import resumed from './fixtures/resumed-turn.stdout.json';
import toolTurn from './fixtures/tool-turn.stdout.json';

const adapter = new ClaudeCodeAdapter();
const input: TurnInput = {
  prompt: 'write a file',
  agent: testAgentConfig(),
  resumeId: null,
  model: { baseUrl: 'http://model.internal:8080', apiKeyEnv: 'BERTH_MODEL_API_KEY' },
  cwd: '/workspace',
  home: '/home/agent',
};
const argvOf = (agent: Partial<AgentCreateParams>) => adapter.buildTurn({ ...input, agent: testAgentConfig(agent) }).argv;
const flag = (argv: readonly string[], name: string) => argv.find((a) => a.startsWith(`${name}=`))?.slice(name.length + 1);
const MCP = { mcp_servers: [{ type: 'url' as const, name: 'docs', url: 'https://mcp.example/mcp' }] };

describe('ClaudeCodeAdapter.buildTurn', () => {
  it('runs headless stream-json with the prompt on stdin and the key by reference only', () => {
    const plan = adapter.buildTurn(input);

    expect(plan.argv.slice(0, 5)).toEqual(['claude', '-p', '--output-format=stream-json', '--input-format=stream-json', '--verbose']);
    expect(plan.argv).toContain('--permission-mode=bypassPermissions');
    expect(plan.argv.some((a) => a.startsWith('--resume'))).toBe(false);
    expect(plan.env['ANTHROPIC_BASE_URL']).toBe('http://model.internal:8080');
    expect(plan.secretEnv).toEqual({ ANTHROPIC_API_KEY: 'BERTH_MODEL_API_KEY' });
    expect(plan.stdinLines.map((l) => JSON.parse(l))).toEqual([
      { type: 'user', message: { role: 'user', content: 'write a file' }, parent_tool_use_id: null, session_id: '' },
    ]);
    expect(plan.keepStdinOpen).toBe(true);
  });

  it('asks for the agent\'s model id, and its effort when it sets one (speed has no setting: the API refuses fast)', () => {
    expect(flag(argvOf({ model: 'claude-opus-4-7' }), '--model')).toBe('claude-opus-4-7');
    expect(flag(argvOf({ model: { id: 'claude-opus-4-7', effort: 'high' } }), '--effort')).toBe('high');
    expect(flag(argvOf({ model: { id: 'claude-opus-4-7', effort: { type: 'max' } } }), '--effort')).toBe('max');
    expect(flag(argvOf({ model: { id: 'claude-opus-4-7', speed: 'standard' } }), '--effort')).toBeUndefined();
  });

  it('resolves every Claude Code model alias to the agent\'s model, so a retired id is not sent as an alias\'s model', () => {
    const { env } = adapter.buildTurn({ ...input, agent: testAgentConfig({ model: 'claude-opus-4-1' }) });
    expect([env['ANTHROPIC_DEFAULT_OPUS_MODEL'], env['ANTHROPIC_DEFAULT_SONNET_MODEL'], env['ANTHROPIC_DEFAULT_HAIKU_MODEL']]).toEqual(['claude-opus-4-1', 'claude-opus-4-1', 'claude-opus-4-1']);
  });

  it('appends the agent system prompt to Claude Code\'s own', () => {
    expect(argvOf({ system: 'Be brief.' })).toContain('--append-system-prompt=Be brief.');
    expect(argvOf({}).some((a) => a.startsWith('--append-system-prompt'))).toBe(false);
  });

  it('offers exactly the enabled toolset tools under their Claude Code names', () => {
    expect(flag(argvOf({}), '--tools')).toBe('Bash,Edit,Read,Write,Glob,Grep,WebFetch,WebSearch');
    expect(flag(argvOf({ tools: [{ type: 'agent_toolset_20260401', configs: [{ name: 'bash', enabled: false }, { name: 'web_search', enabled: false }] }] }), '--tools')).toBe(
      'Edit,Read,Write,Glob,Grep,WebFetch',
    );
    expect(flag(argvOf({ tools: [{ type: 'agent_toolset_20260401', default_config: { enabled: false }, configs: [{ name: 'read', enabled: true }] }] }), '--tools')).toBe('Read');
    // No toolset: no built-in tools at all.
    expect(flag(argvOf({ tools: [] }), '--tools')).toBe('');
    expect(Object.keys(CLAUDE_TOOL_NAMES).sort()).toEqual([...HARNESS_SUPPORT['claude-code'].tools].sort());
  });

  it('asks through the stdio control protocol for always_ask tools only; the others run without asking', () => {
    const asking = argvOf({ tools: [{ type: 'agent_toolset_20260401', configs: [{ name: 'bash', permission_policy: { type: 'always_ask' } }] }] });
    expect(asking).toEqual(expect.arrayContaining(['--permission-mode=bypassPermissions', '--permission-prompt-tool=stdio']));
    expect(JSON.parse(flag(asking, '--settings') ?? '{}')).toEqual({ permissions: { ask: ['Bash'] } });
    const allAsk = argvOf({ tools: [{ type: 'agent_toolset_20260401', default_config: { permission_policy: { type: 'always_ask' } }, configs: [{ name: 'read', permission_policy: { type: 'always_allow' } }] }] });
    expect(JSON.parse(flag(allAsk, '--settings') ?? '{}').permissions.ask).toEqual(['Bash', 'Edit', 'Write', 'Glob', 'Grep', 'WebFetch', 'WebSearch']);
    const never = argvOf({});
    expect(never.some((a) => a.startsWith('--permission-prompt-tool') || a.startsWith('--settings'))).toBe(false);
  });

  it('connects the agent\'s MCP servers over HTTP, only from --mcp-config, with disabled tools not offered and per-tool asks', () => {
    const argv = argvOf({
      ...MCP,
      tools: [
        { type: 'agent_toolset_20260401' },
        { type: 'mcp_toolset', mcp_server_name: 'docs', configs: [{ name: 'shout', enabled: false }, { name: 'lookup', permission_policy: { type: 'always_ask' } }] },
      ],
    });
    expect(argv).toContain('--strict-mcp-config');
    expect(JSON.parse(flag(argv, '--mcp-config') ?? '{}')).toEqual({ mcpServers: { docs: { type: 'http', url: 'https://mcp.example/mcp' } } });
    expect(flag(argv, '--disallowedTools')).toBe('mcp__docs__shout');
    expect(JSON.parse(flag(argv, '--settings') ?? '{}')).toEqual({ permissions: { ask: ['mcp__docs__lookup'] } });
    const askAll = argvOf({ ...MCP, tools: [{ type: 'mcp_toolset', mcp_server_name: 'docs', default_config: { permission_policy: { type: 'always_ask' } } }] });
    expect(JSON.parse(flag(askAll, '--settings') ?? '{}')).toEqual({ permissions: { ask: ['mcp__docs'] } });
    const off = argvOf({ ...MCP, tools: [{ type: 'mcp_toolset', mcp_server_name: 'docs', default_config: { enabled: false } }] });
    expect(off.some((a) => a.startsWith('--mcp-config'))).toBe(false);
    expect(off).toContain('--strict-mcp-config');
  });

  it('resumes with --resume=<id> (an id starting with a dash cannot become a flag)', () => {
    expect(adapter.buildTurn({ ...input, resumeId: '-abc' }).argv).toContain('--resume=-abc');
  });
});

describe('ClaudeCodeAdapter.parseLine over recorded claude 2.1.332 output', () => {
  it('maps a tool turn to thinking, message, tool use, its result, the final message and usage', () => {
    const run = replay(adapter, toolTurn);

    expect(summarize(run.outputs)).toEqual([
      'thinking',
      'message:Writing the file.',
      'tool_use:bash',
      'tool_result',
      'message:The file is written.',
      'usage',
    ]);
    const [toolUse, toolResult] = run.outputs.filter((o) => o.kind === 'tool_use' || o.kind === 'tool_result');
    expect(toolUse).toMatchObject({ input: { command: 'echo hello > out.txt' } });
    expect(toolResult).toMatchObject({ tool_use_id: toolUse?.kind === 'tool_use' ? toolUse.tool_use_id : 'none' });
    expect(run.outputs.at(-1)).toMatchObject({ kind: 'usage', usage: { input_tokens: expect.any(Number), output_tokens: expect.any(Number) } });
    expect(run.sessionIds).toHaveLength(1);
    expect(run.terminal).toEqual({ ok: true, interrupted: false, error: null });
  });

  it('keeps the session id across a resumed turn', () => {
    expect(replay(adapter, resumed).sessionIds).toEqual(replay(adapter, toolTurn).sessionIds);
    expect(summarize(replay(adapter, resumed).outputs)).toEqual(['message:You asked me to write out.txt.', 'usage']);
  });

  it('emits the tool use marked as waiting when claude asks, with the request to answer', () => {
    const run = replay(adapter, askAllowed, 'always_ask');

    expect(summarize(run.outputs)).toEqual(['tool_use:bash:ask', 'tool_result', 'message:after allow', 'usage']);
    const toolUse = run.outputs[0];
    expect(run.confirmations).toEqual([
      { toolUseId: toolUse?.kind === 'tool_use' ? toolUse.tool_use_id : 'none', requestId: expect.any(String), input: { command: 'echo asked > asked.txt', description: 'write asked.txt' } },
    ]);
  });

  it('reports a denied tool use as an error result carrying the deny message', () => {
    const run = replay(adapter, askDenied, 'always_ask');

    expect(summarize(run.outputs)).toEqual(['tool_use:bash:ask', 'tool_result:error', 'message:after deny', 'usage']);
    expect(run.outputs[1]).toMatchObject({ content: [{ type: 'text', text: 'not this time' }] });
  });

  it('answers a confirmation with a control_response', () => {
    const pending = { toolUseId: 'toolu_1', requestId: 'req-1', input: { command: 'ls' } };

    expect(JSON.parse(adapter.answerConfirmation(pending, { result: 'allow', denyMessage: null }))).toEqual({
      type: 'control_response',
      response: { subtype: 'success', request_id: 'req-1', response: { behavior: 'allow', updatedInput: { command: 'ls' } } },
    });
    expect(JSON.parse(adapter.answerConfirmation(pending, { result: 'deny', denyMessage: 'no' })).response.response).toEqual({ behavior: 'deny', message: 'no' });
  });

  it('ends an interrupted turn as interrupted, keeping what was streamed so far', () => {
    const run = replay(adapter, interrupted);

    expect(run.terminal).toEqual({ ok: true, interrupted: true, error: null });
    expect(summarize(run.outputs)[0]).toMatch(/^message:a long answer/);
    expect(JSON.parse(adapter.interruptLine())).toMatchObject({ type: 'control_request', request: { subtype: 'interrupt' } });
  });

  it('reports a model error as a failed turn, not as an agent message', () => {
    const run = replay(adapter, modelError);

    expect(run.terminal).toEqual({ ok: false, interrupted: false, error: 'API Error: 400 scripted bad request' });
    expect(run.outputs.filter((o) => o.kind === 'message')).toEqual([]);
  });

  it('ignores lines that are not JSON objects', () => {
    const state = adapter.initialState('always_allow');
    expect(adapter.parseLine('warning: something', state)).toEqual({ state, outputs: [] });
    expect(adapter.parseLine('[1,2]', state)).toEqual({ state, outputs: [] });
  });
});

describe('ClaudeCodeAdapter.parseLine of MCP calls', () => {
  // The line shapes claude 2.1.332 printed calling the testing library's MCP server.
  const call = JSON.stringify({ type: 'assistant', parent_tool_use_id: null, message: { content: [{ type: 'tool_use', id: 'toolu_m1', name: 'mcp__docs__lookup', input: { key: 'k1' } }] } });
  const ask = JSON.stringify({ type: 'control_request', request_id: 'req_1', request: { subtype: 'can_use_tool', tool_name: 'mcp__docs__lookup', tool_use_id: 'toolu_m1', input: { key: 'k1' } } });
  const result = JSON.stringify({ type: 'user', parent_tool_use_id: null, message: { content: [{ type: 'tool_result', tool_use_id: 'toolu_m1', content: [{ type: 'text', text: 'the value of k1 is 42' }] }] } });

  it('reports mcp__<server>__<tool> as mcp_tool_use and its result as mcp_tool_result', () => {
    expect(summarize(replay(adapter, mcpTurn).outputs)).toEqual(['mcp_tool_use:docs.lookup', 'mcp_tool_result', 'message:Found it.', 'usage']);
    const run = replay(adapter, [call, result]);
    expect(summarize(run.outputs)).toEqual(['mcp_tool_use:docs.lookup', 'mcp_tool_result']);
    expect(run.outputs[1]).toMatchObject({ tool_use_id: 'toolu_m1', content: [{ type: 'text', text: 'the value of k1 is 42' }] });
  });

  it('holds an MCP call that asks until claude asks, then emits it waiting', () => {
    const run = replay(adapter, [call, ask, result], 'always_ask');
    expect(summarize(run.outputs)).toEqual(['mcp_tool_use:docs.lookup:ask', 'mcp_tool_result']);
    expect(run.confirmations).toEqual([{ toolUseId: 'toolu_m1', requestId: 'req_1', input: { key: 'k1' } }]);
  });
});

describe('Claude Code transcripts', () => {
  it('live under the project key of the cwd, next to a directory for sub-agents', () => {
    expect(claudeProjectKey('/home/agent/my_repo.v2')).toBe('-home-agent-my-repo-v2');
    expect(adapter.transcriptLocations('/home/agent', '/workspace', 'abc')).toEqual([
      { dir: '/home/agent/.claude/projects/-workspace', nameEndsWith: 'abc.jsonl', recursive: false },
      { dir: '/home/agent/.claude/projects/-workspace/abc', nameEndsWith: '', recursive: true },
    ]);
  });

  it('cuts long keys at 200 characters with a hash suffix', () => {
    const key = claudeProjectKey(`/${'a'.repeat(300)}`);
    expect(key.startsWith(`-${'a'.repeat(199)}-`)).toBe(true);
    expect(key).not.toBe(claudeProjectKey(`/${'a'.repeat(301)}`));
  });
});

describe('ClaudeCodeAdapter: custom tools', () => {
  const WEATHER = { type: 'custom' as const, name: 'get_weather', description: 'The weather in a city', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } } };
  const withCustom = { ...input, agent: testAgentConfig({ ...MCP, tools: [{ type: 'agent_toolset_20260401' }, { type: 'mcp_toolset', mcp_server_name: 'docs' }, WEATHER] }) };

  it("offers the agent's custom tools through Berth's stdio MCP server in the sandbox, beside its own MCP servers", () => {
    const plan = adapter.buildTurn(withCustom);
    const config = JSON.parse(flag(plan.argv, '--mcp-config') ?? '{}') as { mcpServers: Record<string, { type: string; command?: string; args?: string[]; url?: string }> };
    expect(config.mcpServers['docs']).toEqual({ type: 'http', url: 'https://mcp.example/mcp' });
    expect(config.mcpServers['berth']).toEqual({
      type: 'stdio',
      command: 'node',
      args: ['/home/agent/.berth/custom-tools/server.mjs', '/home/agent/.berth/custom-tools/tools.json', '/run/berth/tools.sock'],
    });
    expect(plan.files.map((f) => f.path)).toEqual(['/home/agent/.berth/custom-tools/server.mjs', '/home/agent/.berth/custom-tools/client.mjs', '/home/agent/.berth/custom-tools/tools.json']);
    expect(JSON.parse(plan.files[2]?.content ?? '[]')).toEqual([{ name: 'get_weather', description: 'The weather in a city', inputSchema: WEATHER.input_schema }]);
    // The call waits for the client: longer than Claude Code's own MCP tool timeout.
    expect(Number(plan.env['MCP_TOOL_TIMEOUT'])).toBeGreaterThanOrEqual(60 * 60 * 1000);
    expect(adapter.buildTurn(input).files).toEqual([]);
    expect(adapter.buildTurn(input).env['MCP_TOOL_TIMEOUT']).toBeUndefined();
  });

  it('reads a call of the berth server as custom_tool_use (also in always_ask: it is never held) and drops its result (the client sent it)', () => {
    for (const mode of ['always_allow', 'always_ask'] as const) {
      const call = JSON.stringify({
        type: 'assistant',
        parent_tool_use_id: null,
        message: { content: [{ type: 'tool_use', id: 'toolu_w', name: 'mcp__berth__get_weather', input: { city: 'Oslo' } }] },
      });
      const result = JSON.stringify({
        type: 'user',
        parent_tool_use_id: null,
        message: { content: [{ type: 'tool_result', tool_use_id: 'toolu_w', content: [{ type: 'text', text: 'sunny' }] }] },
      });
      const first = adapter.parseLine(call, adapter.initialState(mode));
      expect(first.outputs).toEqual([{ kind: 'custom_tool_use', tool_use_id: 'toolu_w', name: 'get_weather', input: { city: 'Oslo' } }]);
      expect(adapter.parseLine(result, first.state).outputs).toEqual([]);
    }
    // Over recorded claude 2.1.332 output: the call, then the turn's answer, nothing of the MCP result.
    const run = replay(adapter, customToolTurn);
    expect(summarize(run.outputs)).toEqual(['custom_tool_use', 'message:It is sunny.', 'usage']);
    expect(run.outputs[0]).toMatchObject({ name: 'get_weather', input: { city: 'Oslo' } });
  });
});
