import { testAgentConfig } from '@berth/contracts/testing';
import type { TurnInput } from '../harness-adapter.port';
import { replay, summarize } from '../testing/replay-fixture';
import { DeepSeekHarnessAdapter } from './deepseek-harness.adapter';
import askTurn from './fixtures/ask-turn.stdout.json';
import interrupted from './fixtures/interrupted-turn.stdout.json';

// Fixtures follow the ASSUMED protocol (see fixtures/README.md and docs/harnesses.md).
const adapter = new DeepSeekHarnessAdapter();
const input: TurnInput = {
  prompt: 'write a file',
  agent: testAgentConfig({ model: 'deepseek-chat', system: 'Be brief.', tools: [{ type: 'agent_toolset_20260401', default_config: { permission_policy: { type: 'always_ask' } } }] }),
  resumeId: null,
  model: { baseUrl: 'http://model.internal:8080', apiKeyEnv: 'BERTH_MODEL_API_KEY' },
  cwd: '/workspace',
  home: '/home/agent',
};

describe('DeepSeekHarnessAdapter', () => {
  it('starts dsh with the approval mode and thread to resume, the prompt on stdin', () => {
    const plan = adapter.buildTurn({ ...input, resumeId: 'thr_1' });

    expect(plan.argv).toEqual(expect.arrayContaining(['dsh', 'exec', '--json', '--model=deepseek-chat', '--approval=ask', '--instructions=Be brief.', '--thread=thr_1']));
    expect(adapter.buildTurn({ ...input, agent: testAgentConfig() }).argv).toContain('--approval=auto');
    expect(JSON.parse(plan.stdinLines[0] ?? '{}')).toEqual({ type: 'user.message', text: 'write a file' });
    expect(plan.env['DEEPSEEK_BASE_URL']).toBe('http://model.internal:8080');
    expect(plan.secretEnv).toEqual({ DEEPSEEK_API_KEY: 'BERTH_MODEL_API_KEY' });
  });

  it('emits the tool use once, marked as waiting, when approval is required', () => {
    const run = replay(adapter, askTurn, 'always_ask');

    expect(summarize(run.outputs)).toEqual(['thinking', 'message:Writing the file.', 'tool_use:shell:ask', 'tool_result', 'message:The file is written.', 'usage']);
    expect(run.confirmations).toEqual([{ toolUseId: 'tc_1', requestId: 'apr_1', input: { command: 'echo hello > out.txt' } }]);
    expect(run.sessionIds).toEqual(['thr_7f3a']);
    expect(run.terminal).toEqual({ ok: true, interrupted: false, error: null });
  });

  it('answers approvals and interrupts on stdin', () => {
    const pending = { toolUseId: 'tc_1', requestId: 'apr_1', input: {} };
    expect(JSON.parse(adapter.answerConfirmation(pending, { result: 'deny', denyMessage: 'no' }))).toEqual({ type: 'approval.response', approval_id: 'apr_1', decision: 'deny', message: 'no' });
    expect(JSON.parse(adapter.answerConfirmation(pending, { result: 'allow', denyMessage: null }))).toEqual({ type: 'approval.response', approval_id: 'apr_1', decision: 'approve' });
    expect(JSON.parse(adapter.interruptLine())).toEqual({ type: 'turn.interrupt' });
  });

  it('ends an interrupted turn as interrupted', () => {
    expect(replay(adapter, interrupted).terminal).toEqual({ ok: true, interrupted: true, error: null });
  });
});
