import type { TurnInput } from '../harness-adapter.port';
import { replay, summarize } from '../testing/replay-fixture';
import { CodexAdapter } from './codex.adapter';
import askAllowed from './fixtures/ask-allowed.stdout.json';
import askDenied from './fixtures/ask-denied.stdout.json';
import interrupted from './fixtures/interrupted-turn.stdout.json';
import modelError from './fixtures/model-error.stdout.json';
import resumed from './fixtures/resumed-turn.stdout.json';
import toolTurn from './fixtures/tool-turn.stdout.json';

const adapter = new CodexAdapter();
const input: TurnInput = {
  prompt: '-p looks like a flag',
  resumeId: null,
  model: { baseUrl: 'http://model.internal:8080', apiKeyEnv: 'BERTH_MODEL_API_KEY' },
  permissionMode: 'always_allow',
  cwd: '/workspace',
  home: '/home/agent',
};

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

  it('passes the agent system prompt as developer_instructions', () => {
    expect(adapter.buildTurn({ ...input, systemPrompt: 'Say "hi"' }).files[0]?.content).toContain('developer_instructions = "Say \\"hi\\""');
  });

  it('resumes with exec resume <thread id>', () => {
    expect(adapter.buildTurn({ ...input, resumeId: 'thread-1' }).argv.slice(5)).toEqual(['resume', 'thread-1', '--', '-p looks like a flag']);
  });

  it('in always_ask runs codex app-server: initialize, then a thread that asks before untrusted commands, stdin kept open', () => {
    const plan = adapter.buildTurn({ ...input, permissionMode: 'always_ask' });
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
    expect(JSON.parse(adapter.buildTurn({ ...input, permissionMode: 'always_ask', resumeId: 'thread-1' }).stdinLines[2] ?? '{}')).toMatchObject({
      method: 'thread/resume',
      params: { threadId: 'thread-1', approvalPolicy: 'untrusted' },
    });
  });
});

describe('CodexAdapter.parseLine over recorded codex 0.171.0 app-server output (always_ask)', () => {
  it('sends the prompt once the thread is open, holds the command for approval, then shows its result and the answer', () => {
    const run = replay(adapter, askAllowed, 'always_ask', 'write asked.txt');

    expect(summarize(run.outputs)).toEqual(['tool_use:command_execution:ask', 'tool_result', 'message:after allow', 'usage']);
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
    expect(summarize(run.outputs)).toEqual(['tool_use:command_execution:ask', 'tool_result:error', 'message:after deny', 'usage']);
    expect(run.terminal).toEqual({ ok: true, interrupted: false, error: null });
  });
});

describe('CodexAdapter.parseLine over recorded codex 0.171.0 output', () => {
  it('maps a tool turn to thinking, messages, the command as a tool use with its result, and usage', () => {
    const run = replay(adapter, toolTurn);

    expect(summarize(run.outputs)).toEqual([
      'thinking',
      'message:Writing the file.',
      'tool_use:command_execution',
      'tool_result',
      'message:The file is written.',
      'usage',
    ]);
    expect(run.outputs[2]).toMatchObject({ tool_use_id: 'item_3', input: { command: "/bin/bash -lc 'echo hello > out.txt'" } });
    expect(run.outputs[3]).toMatchObject({ tool_use_id: 'item_3', is_error: false });
    expect(run.outputs[5]).toEqual({
      kind: 'usage',
      usage: { input_tokens: 20353, output_tokens: 169, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    });
    expect(run.sessionIds).toEqual(['01a22d47-5478-7e53-95c9-50fc3f414285']);
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
    expect(summarize(run.outputs)).toEqual(['tool_use:command_execution', 'tool_result:error', 'tool_use:file_change', 'tool_result']);
    expect(run.outputs[3]).toMatchObject({ content: [{ type: 'text', text: 'add a.txt' }] });
  });

  it('finds the rollout by thread id under CODEX_HOME/sessions', () => {
    expect(adapter.transcriptLocations('/home/agent', '/workspace', 't1')).toEqual([
      { dir: '/home/agent/.codex/sessions', nameEndsWith: '-t1.jsonl', recursive: true },
    ]);
  });
});
