import { testAgentConfig } from '@berth/contracts/testing';
import type { TurnInput } from '../harness-adapter.port';
import { replay, summarize } from '../testing/replay-fixture';
import modelError from './fixtures/model-error.stdout.json';
import resumeMissing from './fixtures/resume-missing.stdout.json';
import toolTurn from './fixtures/tool-turn.stdout.json';
import { HermesAdapter } from './hermes.adapter';

// Fixtures follow the ASSUMED protocol (see fixtures/README.md and docs/harnesses.md).
const adapter = new HermesAdapter();
const input: TurnInput = {
  prompt: 'write a file',
  agent: testAgentConfig({ model: 'hermes-4', system: 'You are Hermes.' }),
  resumeId: null,
  model: { baseUrl: 'http://model.internal:8080', apiKeyEnv: 'BERTH_MODEL_API_KEY' },
  cwd: '/workspace',
  home: '/home/agent',
};

describe('HermesAdapter', () => {
  it('creates a session, or resumes one, before submitting the prompt', () => {
    const methods = (resumeId: string | null) => adapter.buildTurn({ ...input, resumeId }).stdinLines.map((l) => JSON.parse(l));

    expect(methods(null).map((m) => m.method)).toEqual(['session.create', 'prompt.submit']);
    expect(methods('hs_1')[0]).toMatchObject({ method: 'session.resume', params: { session_id: 'hs_1' } });
    expect(methods(null)[1]).toMatchObject({ params: { text: 'write a file' } });
  });

  it('points config.yaml at the model endpoint with the agent\'s model, its system prompt in SOUL.md, the key by reference', () => {
    const plan = adapter.buildTurn(input);
    expect(plan.files[0]?.path).toBe('/home/agent/.hermes/config.yaml');
    expect(plan.files[0]?.content).toContain('base_url: "http://model.internal:8080/v1"');
    expect(plan.files[0]?.content).toContain('default: "hermes-4"');
    expect(plan.files[1]).toEqual({ path: '/home/agent/.hermes/SOUL.md', content: 'You are Hermes.\n' });
    expect(plan.secretEnv).toEqual({ OPENAI_API_KEY: 'BERTH_MODEL_API_KEY' });
  });

  it('maps a tool turn to thinking, messages, the tool use and result, and usage', () => {
    const run = replay(adapter, toolTurn);

    expect(summarize(run.outputs)).toEqual(['thinking', 'message:Writing the file.', 'tool_use:terminal', 'tool_result', 'message:The file is written.', 'usage']);
    expect(run.outputs.at(-1)).toEqual({ kind: 'usage', usage: { input_tokens: 1200, output_tokens: 40, cache_creation_input_tokens: 0, cache_read_input_tokens: 300 } });
    expect(run.sessionIds).toEqual(['hs_20261130_a1b2c3']);
    expect(run.terminal).toEqual({ ok: true, interrupted: false, error: null });
  });

  it('fails the turn with the last error the gateway reported', () => {
    expect(replay(adapter, modelError).terminal).toEqual({ ok: false, interrupted: false, error: 'provider returned 529 overloaded' });
  });

  it('fails the turn when the session to resume is gone', () => {
    expect(replay(adapter, resumeMissing).terminal).toEqual({ ok: false, interrupted: false, error: 'session not found: hs_gone' });
  });
});
