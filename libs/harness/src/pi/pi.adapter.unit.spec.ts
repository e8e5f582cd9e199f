import { HARNESS_SUPPORT, type AgentCreateParams } from '@berth/contracts';
import { testAgentConfig } from '@berth/contracts/testing';
import type { TurnInput } from '../harness-adapter.port';
import { replay, summarize } from '../testing/replay-fixture';
import askAllowed from './fixtures/ask-allowed.stdout.json';
import askDenied from './fixtures/ask-denied.stdout.json';
import customToolAsk from './fixtures/custom-tool-ask.stdout.json';
import customToolTurn from './fixtures/custom-tool-turn.stdout.json';
import interrupted from './fixtures/interrupted-turn.stdout.json';
import modelError from './fixtures/model-error.stdout.json';
import resumed from './fixtures/resumed-turn.stdout.json';
import toolTurn from './fixtures/tool-turn.stdout.json';
import { PI_CONFIRM_EXTENSION, PI_TOOL_NAMES, PiAdapter, piSessionDirName } from './pi.adapter';

const adapter = new PiAdapter();
const input: TurnInput = {
  prompt: 'write a file',
  agent: testAgentConfig({ model: 'claude-x' }),
  resumeId: null,
  model: { baseUrl: 'http://model.internal:8080', apiKeyEnv: 'BERTH_MODEL_API_KEY' },
  cwd: '/workspace',
  home: '/home/agent',
};
const argvOf = (agent: Partial<AgentCreateParams>) => adapter.buildTurn({ ...input, agent: testAgentConfig({ model: 'claude-x', ...agent }) }).argv;
const after = (argv: readonly string[], name: string) => argv[argv.indexOf(name) + 1];

describe('PiAdapter.buildTurn', () => {
  it('runs pi --mode rpc offline, asks for the session id first, then sends the prompt', () => {
    const plan = adapter.buildTurn(input);

    expect(plan.argv).toEqual(['pi', '--mode', 'rpc', '--provider', 'berth', '--model', 'claude-x', '--tools', 'bash,edit,read,write,find,ls,grep']);
    expect(plan.env['PI_OFFLINE']).toBe('1');
    expect(plan.stdinLines.map((l) => JSON.parse(l).type)).toEqual(['get_state', 'prompt']);
    expect(JSON.parse(plan.stdinLines[1] ?? '{}')).toMatchObject({ message: 'write a file' });
    expect(plan.keepStdinOpen).toBe(true);
  });

  it('writes a models.json provider with the agent\'s model that names the key variable instead of holding the key', () => {
    const [file] = adapter.buildTurn(input).files;

    expect(file?.path).toBe('/home/agent/.pi/agent/models.json');
    expect(JSON.parse(file?.content ?? '{}')).toEqual({
      providers: { berth: { baseUrl: 'http://model.internal:8080', api: 'anthropic-messages', apiKey: 'BERTH_MODEL_API_KEY', models: [{ id: 'claude-x', reasoning: true }] } },
    });
    expect(adapter.buildTurn(input).secretEnv).toEqual({ BERTH_MODEL_API_KEY: 'BERTH_MODEL_API_KEY' });
  });

  it('sets the thinking level from the agent\'s effort', () => {
    expect(after(argvOf({ model: { id: 'claude-x', effort: 'xhigh' } }), '--thinking')).toBe('xhigh');
    expect(argvOf({})).not.toContain('--thinking');
  });

  it('appends the agent system prompt', () => {
    expect(argvOf({ system: 'Be brief.' }).slice(-2)).toEqual(['--append-system-prompt', 'Be brief.']);
  });

  it('allows exactly the enabled toolset tools (glob is find and ls), or none', () => {
    expect(after(argvOf({ tools: [{ type: 'agent_toolset_20260401', configs: [{ name: 'bash', enabled: false }, { name: 'glob', enabled: false }] }] }), '--tools')).toBe('edit,read,write,grep');
    expect(argvOf({ tools: [] })).toContain('--no-tools');
    expect(Object.keys(PI_TOOL_NAMES).sort()).toEqual([...HARNESS_SUPPORT.pi.tools].sort());
  });

  it('resumes with --session <id>', () => {
    expect(adapter.buildTurn({ ...input, resumeId: 's-1' }).argv.slice(-2)).toEqual(['--session', 's-1']);
  });

  it('for an agent whose tools ask loads only Berth\u2019s confirmation extension, written fresh for the turn', () => {
    const plan = adapter.buildTurn({ ...input, agent: testAgentConfig({ model: 'claude-x', tools: [{ type: 'agent_toolset_20260401', default_config: { permission_policy: { type: 'always_ask' } } }] }) });
    expect(plan.argv).toEqual(expect.arrayContaining(['--no-extensions', '--extension', '/home/agent/.berth/pi/berth-confirm.ts']));
    expect(plan.files).toContainEqual({ path: '/home/agent/.berth/pi/berth-confirm.ts', content: PI_CONFIRM_EXTENSION });
    expect(PI_CONFIRM_EXTENSION).toContain("pi.on('tool_call'");
    expect(adapter.buildTurn(input).argv).not.toContain('--extension');
  });
});

describe('PiAdapter.parseLine over recorded pi 0.73.1 RPC output with the confirmation extension (always_ask)', () => {
  it('holds the bash call until the extension asks, then shows its result', () => {
    const run = replay(adapter, askAllowed, 'always_ask');
    expect(summarize(run.outputs)).toEqual(['tool_use:bash:ask', 'tool_result', 'message:after allow', 'usage']);
    const toolUse = run.outputs.find((o) => o.kind === 'tool_use');
    expect(run.confirmations).toEqual([{ toolUseId: (toolUse as { tool_use_id: string }).tool_use_id, requestId: expect.any(String), input: { command: 'echo asked > asked.txt' } }]);
    expect(run.terminal).toEqual({ ok: true, interrupted: false, error: null });
  });

  it('answers the extension with the decision; a denied call is an error result carrying the deny message', () => {
    const pending = { toolUseId: 'toolu_1', requestId: 'req-1', input: {} };
    expect(JSON.parse(adapter.answerConfirmation(pending, { result: 'allow', denyMessage: null }))).toEqual({ type: 'extension_ui_response', id: 'req-1', value: '{"result":"allow"}' });
    expect(JSON.parse(JSON.parse(adapter.answerConfirmation(pending, { result: 'deny', denyMessage: 'not now' })).value)).toEqual({ result: 'deny', message: 'not now' });
    const run = replay(adapter, askDenied, 'always_ask');
    expect(run.outputs.find((o) => o.kind === 'tool_result')).toMatchObject({ is_error: true, content: [{ type: 'text', text: 'not this time' }] });
  });
});

describe('PiAdapter.parseLine over recorded pi 0.73.1 RPC output', () => {
  it('maps a tool turn to thinking, messages, the bash tool use with its result, and summed usage', () => {
    const run = replay(adapter, toolTurn);

    expect(summarize(run.outputs)).toEqual([
      'thinking',
      'message:Writing the file.',
      'tool_use:bash',
      'tool_result',
      'message:The file is written.',
      'usage',
    ]);
    expect(run.outputs[2]).toMatchObject({ input: { command: 'echo hello > out.txt' } });
    const usage = run.outputs.at(-1);
    expect(usage?.kind === 'usage' && usage.usage.input_tokens > 0 && usage.usage.output_tokens > 0).toBe(true);
    expect(run.sessionIds).toHaveLength(1);
    expect(run.terminal).toEqual({ ok: true, interrupted: false, error: null });
  });

  it('keeps the session on resume', () => {
    const run = replay(adapter, resumed);
    expect(run.sessionIds).toEqual(replay(adapter, toolTurn).sessionIds);
    expect(summarize(run.outputs)).toEqual(['message:You asked me to write out.txt.', 'usage']);
  });

  it('ends an aborted turn as interrupted', () => {
    expect(replay(adapter, interrupted).terminal).toEqual({ ok: true, interrupted: true, error: null });
    expect(JSON.parse(adapter.interruptLine())).toEqual({ type: 'abort' });
  });

  it('reports a model error as a failed turn', () => {
    const run = replay(adapter, modelError);
    expect(run.terminal?.ok).toBe(false);
    expect(run.terminal?.error).toContain('scripted bad request');
  });

  it('files sessions under a directory named after the cwd', () => {
    expect(piSessionDirName('/tmp/probe/cwd5')).toBe('--tmp-probe-cwd5--');
    expect(adapter.transcriptLocations('/home/agent', '/workspace', 's1')).toEqual([
      { dir: '/home/agent/.pi/agent/sessions/--workspace--', nameEndsWith: '_s1.jsonl', recursive: false },
    ]);
  });
});

describe('PiAdapter: custom tools', () => {
  const WEATHER = { type: 'custom' as const, name: 'get_weather', description: 'The weather in a city', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } } };
  const withWeather = (tools: AgentCreateParams['tools'] = [{ type: 'agent_toolset_20260401' }]) => ({ ...input, agent: testAgentConfig({ tools: [...(tools ?? []), WEATHER] }) });
  const flagValues = (argv: readonly string[], name: string) => argv.flatMap((a, i) => (a === name ? [argv[i + 1]] : []));

  it("registers the agent's custom tools as tools of Berth's extension, named berth__<name> and allowed in --tools", () => {
    const plan = adapter.buildTurn(withWeather());
    expect(flagValues(plan.argv, '--extension')).toEqual(['/home/agent/.berth/custom-tools/pi-extension.ts']);
    expect(flagValues(plan.argv, '--tools')).toEqual(['bash,edit,read,write,find,ls,grep,berth__get_weather']);
    expect(plan.files.map((f) => f.path)).toEqual([
      '/home/agent/.pi/agent/models.json',
      '/home/agent/.berth/custom-tools/client.mjs',
      '/home/agent/.berth/custom-tools/tools.json',
      '/home/agent/.berth/custom-tools/pi-extension.ts',
    ]);
    const extension = plan.files[3]?.content ?? '';
    expect(extension).toContain('from "/home/agent/.berth/custom-tools/client.mjs"');
    expect(extension).toContain('const SOCKET = "/run/berth/tools.sock"');
    // With no toolset tool the custom ones are still the allowlist, not --no-tools.
    const only = adapter.buildTurn(withWeather([]));
    expect(flagValues(only.argv, '--tools')).toEqual(['berth__get_weather']);
    expect(only.argv).not.toContain('--no-tools');
  });

  it('in always_ask loads both extensions, and the confirmation one lets a custom tool call through unasked', () => {
    const plan = adapter.buildTurn(withWeather([{ type: 'agent_toolset_20260401', default_config: { permission_policy: { type: 'always_ask' } } }]));
    expect(plan.argv).toContain('--no-extensions');
    expect(flagValues(plan.argv, '--extension')).toEqual(['/home/agent/.berth/pi/berth-confirm.ts', '/home/agent/.berth/custom-tools/pi-extension.ts']);
    expect(PI_CONFIRM_EXTENSION).toContain('startsWith("berth__")) return undefined');
  });

  it('reads a call of a berth__ tool as custom_tool_use with the model\'s id, never held or asked about, and drops its result, over recorded pi 0.73.1 output', () => {
    for (const [mode, lines] of [['always_allow', customToolTurn], ['always_ask', customToolAsk]] as const) {
      const run = replay(adapter, lines, mode);
      expect(summarize(run.outputs)).toEqual(['custom_tool_use', 'message:It is sunny.', 'usage']);
      expect(run.outputs[0]).toEqual({ kind: 'custom_tool_use', tool_use_id: expect.stringMatching(/^toolu_/), name: 'get_weather', input: { city: 'Oslo' } });
      expect(run.confirmations).toEqual([]);
      expect(run.terminal).toEqual({ ok: true, interrupted: false, error: null });
    }
  });
});
