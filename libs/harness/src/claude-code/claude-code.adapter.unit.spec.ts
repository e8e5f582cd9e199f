import type { TurnInput } from '../harness-adapter.port';
import { replay, summarize } from '../testing/replay-fixture';
import { ClaudeCodeAdapter } from './claude-code.adapter';
import { claudeProjectKey } from './claude-project-key';
import askAllowed from './fixtures/ask-allowed.stdout.json';
import askDenied from './fixtures/ask-denied.stdout.json';
import interrupted from './fixtures/interrupted-turn.stdout.json';
import modelError from './fixtures/model-error.stdout.json';
import resumed from './fixtures/resumed-turn.stdout.json';
import toolTurn from './fixtures/tool-turn.stdout.json';

const adapter = new ClaudeCodeAdapter();
const input: TurnInput = {
  prompt: 'write a file',
  resumeId: null,
  model: { baseUrl: 'http://model.internal:8080', apiKeyEnv: 'BERTH_MODEL_API_KEY' },
  permissionMode: 'always_allow',
  cwd: '/workspace',
  home: '/home/agent',
};

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

  it('appends the agent system prompt to Claude Code\'s own', () => {
    expect(adapter.buildTurn({ ...input, systemPrompt: 'Be brief.' }).argv).toContain('--append-system-prompt=Be brief.');
    expect(adapter.buildTurn(input).argv.some((a) => a.startsWith('--append-system-prompt'))).toBe(false);
  });

  it('resumes with --resume=<id> (an id starting with a dash cannot become a flag)', () => {
    expect(adapter.buildTurn({ ...input, resumeId: '-abc' }).argv).toContain('--resume=-abc');
  });

  it('asks through the stdio control protocol in always_ask mode', () => {
    const argv = adapter.buildTurn({ ...input, permissionMode: 'always_ask' }).argv;
    expect(argv).toEqual(expect.arrayContaining(['--permission-mode=default', '--permission-prompt-tool=stdio']));
    expect(argv).not.toContain('--permission-mode=bypassPermissions');
  });
});

describe('ClaudeCodeAdapter.parseLine over recorded claude 2.1.332 output', () => {
  it('maps a tool turn to thinking, message, tool use, its result, the final message and usage', () => {
    const run = replay(adapter, toolTurn);

    expect(summarize(run.outputs)).toEqual([
      'thinking',
      'message:Writing the file.',
      'tool_use:Bash',
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

    expect(summarize(run.outputs)).toEqual(['tool_use:Bash:ask', 'tool_result', 'message:after allow', 'usage']);
    const toolUse = run.outputs[0];
    expect(run.confirmations).toEqual([
      { toolUseId: toolUse?.kind === 'tool_use' ? toolUse.tool_use_id : 'none', requestId: expect.any(String), input: { command: 'echo asked > asked.txt', description: 'write asked.txt' } },
    ]);
  });

  it('reports a denied tool use as an error result carrying the deny message', () => {
    const run = replay(adapter, askDenied, 'always_ask');

    expect(summarize(run.outputs)).toEqual(['tool_use:Bash:ask', 'tool_result:error', 'message:after deny', 'usage']);
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
