// Seed: RuntimeSubjectRebuildReadyTests (see docs/seed-map.md).
import { ScriptedClock, seedHarness } from '../testing/flow-harness';

const OWNER = 'owner_1';

function harness() {
  const clock = new ScriptedClock(new Date('2026-01-01T00:00:00.000Z'));
  const sleeps: number[] = [];
  const h = seedHarness({ clock, sleep: async (ms) => void sleeps.push(ms) });
  return { ...h, clock, sleeps };
}

describe('RuntimeSubjectRebuildReadyTests', () => {
  it('a terminated rebuild target returns immediately', async () => {
    const h = harness();
    await h.given('sesn_1', (c) => [c.create(), c.bind(1), c.terminate()]);

    const result = await h.flows.awaitRuntimeRebuild(OWNER, 'sesn_1');

    expect(result).toMatchObject({ because: 'terminal', view: { lifecycle: 'TERMINATED' } });
    expect(h.kernel.loads).toBe(1);
    expect(h.sleeps).toEqual([]);
  });

  it('a ready session with its runtime available returns immediately', async () => {
    const h = harness();
    await h.given('sesn_1', (c) => [c.create(), c.bind(1)]);

    const result = await h.flows.awaitRuntimeRebuild(OWNER, 'sesn_1');

    expect(result).toMatchObject({ because: 'ready', view: { lifecycle: 'READY', runtime_unavailable: false } });
    expect(h.kernel.loads).toBe(1);
    expect(h.sleeps).toEqual([]);
  });

  it('runtime_unavailable is in flight and the wait is bounded by the budget', async () => {
    const h = harness();
    await h.given('sesn_1', (c) => [c.create(), c.bind(1), c.died(1)]);
    // Started at t=0; the next look at the clock is far past the 180 s budget.
    h.clock.script.push(new Date('2026-01-01T00:00:00.000Z'), new Date('2026-01-01T02:46:40.000Z'));

    const result = await h.flows.awaitRuntimeRebuild(OWNER, 'sesn_1');

    expect(result).toMatchObject({ because: 'budget_exhausted', view: { lifecycle: 'READY', runtime_unavailable: true } });
    // Only the first read: the deadline ended the loop before any sleep.
    expect(h.kernel.loads).toBe(1);
    expect(h.sleeps).toEqual([]);
  });
});
