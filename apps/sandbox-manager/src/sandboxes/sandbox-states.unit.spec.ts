import type { SandboxInfo } from '@berth/ports';
import { countSandboxStates } from './sandbox-states';

const info = (name: string, labels: Record<string, string>, running: boolean): SandboxInfo => ({ id: name, name, labels, running, exitCode: running ? null : 137, oomKilled: false, startedAt: null });
const managed = { 'berth.managed': 'true', 'berth.environment': 'env_1' };

describe('countSandboxStates', () => {
  it("counts a pool's running containers as warm, a session's as bound, any stopped one as exited, and ignores foreign ones", () => {
    const counts = countSandboxStates([
      info('berth-p-env_1-a1', { ...managed, 'berth.pool': 'env_1' }, true),
      info('berth-p-env_1-a2', { ...managed, 'berth.pool': 'env_1' }, true),
      info('berth-s-sesn_1-g1', { ...managed, 'berth.session': 'sesn_1' }, true),
      // A claimed pool container carries the session's name: bound.
      info('berth-s-sesn_2-g1', { ...managed, 'berth.pool': 'env_1' }, true),
      info('berth-s-sesn_3-g2', { ...managed, 'berth.session': 'sesn_3' }, false),
      info('someone-elses', {}, true),
    ]);
    expect(counts).toEqual({ warm: 2, bound: 2, exited: 1 });
  });
});
