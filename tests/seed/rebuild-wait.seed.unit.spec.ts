// Seed: RuntimeSubjectRebuildReadyTests (see docs/seed-map.md). Pins SessionUseCases.awaitRuntimeRebuild
// (over the pure nextRebuildWaitStep), which `POST …/recover?wait_ms=` runs.
import { OWNER, Probes, ScriptedClock, seedPlatform } from './support/seed-platform';

function platform() {
  const clock = new ScriptedClock(new Date('2026-01-01T00:00:00.000Z'));
  const p = seedPlatform({ clock });
  const reads = jest.spyOn(p.sessions, 'get');
  return { ...p, clock, reads };
}

describe('RuntimeSubjectRebuildReadyTests', () => {
  it('a terminated rebuild target returns immediately', async () => {
    const p = platform();
    await p.given('sesn_1', (c) => [c.create(), c.bind(1), c.terminate()]);

    const result = await p.useCases.awaitRuntimeRebuild(OWNER, 'sesn_1');

    expect(result).toMatchObject({ because: 'terminal', record: { view: { lifecycle: 'TERMINATED' } } });
    expect(p.reads).toHaveBeenCalledTimes(1);
    expect(p.sleeps).toEqual([]);
  });

  it('a ready session with its runtime available returns immediately', async () => {
    const p = platform();
    await p.given('sesn_1', (c) => [c.create(), c.bind(1)]);

    const result = await p.useCases.awaitRuntimeRebuild(OWNER, 'sesn_1');

    expect(result).toMatchObject({ because: 'ready', record: { view: { lifecycle: 'READY', runtime_unavailable: false } } });
    expect(p.reads).toHaveBeenCalledTimes(1);
    expect(p.sleeps).toEqual([]);
  });

  it('runtime_unavailable is in flight and the wait is bounded by the budget', async () => {
    const p = platform();
    await p.given('sesn_1', (c) => [c.create(), c.bind(1), c.died(1)]);
    // Started at t=0; the next look at the clock is far past the 180 s budget.
    p.clock.script.push(new Date('2026-01-01T00:00:00.000Z'), new Date('2026-01-01T02:46:40.000Z'));

    const result = await p.useCases.awaitRuntimeRebuild(OWNER, 'sesn_1');

    expect(result).toMatchObject({ because: 'budget_exhausted', record: { view: { lifecycle: 'READY', runtime_unavailable: true } } });
    // Only the first read: the deadline ended the loop before any sleep.
    expect(p.reads).toHaveBeenCalledTimes(1);
    expect(p.sleeps).toEqual([]);
  });

  it('a recover asked to wait polls until the new sandbox is bound', async () => {
    const p = platform();
    await p.given('sesn_1', (c) => [c.create(), c.bind(1)]);
    p.probe.answer = Probes.gone;
    // The sandbox-manager binds generation 2 while the recover waits.
    p.meanwhile.run = async () => void (await p.given('sesn_1', (c) => [c.bind(2)]));

    const result = await p.useCases.recover(OWNER, 'sesn_1', { waitMs: 10_000 });

    expect(result.recover.outcome).toBe('startup-requested');
    expect(result.rebuild).toBe('ready');
    expect(result.record.view).toMatchObject({ lifecycle: 'READY', runtime_unavailable: false, sandbox: { generation: 2 } });
    expect(p.sleeps.filter((ms) => ms === 2_000)).toHaveLength(1);
  });
});
