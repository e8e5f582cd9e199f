import { ValidationError } from '@berth/core';
import { poolSandboxLabels, poolSandboxName, SandboxLabels, sandboxOwner, sessionSandboxLabels, sessionSandboxName } from './naming';

describe('sandbox naming', () => {
  it('names a session container from session id and generation, deterministically', () => {
    expect(sessionSandboxName('sesn_01abc', 3)).toBe('berth-s-sesn_01abc-g3');
    expect(sessionSandboxName('sesn_01abc', 3)).toBe(sessionSandboxName('sesn_01abc', 3));
    expect(sessionSandboxName('sesn_01abc', 4)).not.toBe(sessionSandboxName('sesn_01abc', 3));
  });

  it('refuses unsafe ids and non-positive generations, naming the field', () => {
    expect(() => sessionSandboxName('a/b', 1)).toThrow(expect.objectContaining({ field: 'session_id' }));
    expect(() => sessionSandboxName('sesn_1', 0)).toThrow(ValidationError);
    expect(() => sessionSandboxName('sesn_1', 1.5)).toThrow(expect.objectContaining({ field: 'generation' }));
    expect(() => poolSandboxName('env_1', 'Bad-Slot')).toThrow(expect.objectContaining({ field: 'slot' }));
  });

  it('labels session containers with session, generation, environment and the managed marker', () => {
    expect(sessionSandboxLabels('sesn_1', 2, 'env_a')).toEqual({
      'berth.managed': 'true',
      'berth.session': 'sesn_1',
      'berth.generation': '2',
      'berth.environment': 'env_a',
    });
    expect(poolSandboxLabels('env_a')).toEqual({ 'berth.managed': 'true', 'berth.environment': 'env_a', 'berth.pool': 'env_a' });
  });

  it('reads the owner back from the name, including a claimed pool container (pool labels, session name)', () => {
    const poolLabels = poolSandboxLabels('env-a_1');
    expect(sandboxOwner('/' + sessionSandboxName('sesn_x-y', 12), sessionSandboxLabels('sesn_x-y', 12, 'env-a_1'))).toEqual({
      kind: 'session',
      sessionId: 'sesn_x-y',
      generation: 12,
      environmentId: 'env-a_1',
    });
    expect(sandboxOwner(sessionSandboxName('sesn_2', 1), poolLabels)).toEqual({
      kind: 'session',
      sessionId: 'sesn_2',
      generation: 1,
      environmentId: 'env-a_1',
    });
    expect(sandboxOwner(poolSandboxName('env-a_1', 'k3x9'), poolLabels)).toEqual({ kind: 'pool', environmentId: 'env-a_1', slot: 'k3x9' });
  });

  it('disowns containers without the managed label or with foreign names', () => {
    expect(sandboxOwner(sessionSandboxName('sesn_1', 1), { [SandboxLabels.session]: 'sesn_1' })).toBeNull();
    expect(sandboxOwner('postgres', { [SandboxLabels.managed]: 'true' })).toBeNull();
    expect(sandboxOwner(poolSandboxName('env_a', 'k1'), poolSandboxLabels('env_b'))).toBeNull();
  });
});
