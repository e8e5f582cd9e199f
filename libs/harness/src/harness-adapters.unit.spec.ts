import { HarnessKindSchema } from '@berth/contracts';
import { testAgentConfig } from '@berth/contracts/testing';
import { harnessAdapterFor } from './harness-adapters';

describe('harnessAdapterFor', () => {
  it.each(HarnessKindSchema.options)('has an adapter for %s whose plan names the model key secret instead of holding it', (kind) => {
    const adapter = harnessAdapterFor(kind);
    const plan = adapter.buildTurn({
      prompt: 'hi',
      agent: testAgentConfig(),
      resumeId: null,
      model: { baseUrl: 'http://model.internal:8080', apiKeyEnv: 'BERTH_MODEL_API_KEY' },
      cwd: '/workspace',
      home: '/home/agent',
    });

    expect(adapter.kind).toBe(kind);
    expect(Object.values(plan.secretEnv)).toEqual(['BERTH_MODEL_API_KEY']);
  });

  it('refuses an unknown harness with a validation error', () => {
    expect(() => harnessAdapterFor('nope' as never)).toThrow(/unknown harness nope/);
  });
});
