import { FixedClock } from '@berth/core/testing';
import { DEFAULT_SANDBOX_CONFIG, type SandboxConfig, sessionSandboxName, sessionSandboxSpec, SPARE_WORKSPACE_GRACE_MS } from '@berth/sandbox-domain';
// eslint-disable-next-line @nx/enforce-module-boundaries -- the in-memory runtime fake lives in the testing library
import { InMemorySandboxRuntime, InMemoryWorkspaces, MemorySandboxClaims } from '@berth/testing';
import { type SandboxDeath, watchSandboxDeaths } from './death-watcher';
import { sweepExpiredLeases } from './lease-sweep';
import type { BoundSandbox } from './sandbox-bindings';
import { reconcileAtStart } from './startup-reconcile';
import { WarmPool } from './warm-pool';

const config = (size: number): SandboxConfig => ({ ...DEFAULT_SANDBOX_CONFIG, warmPool: { size, ttlSeconds: 600 } });

async function until(condition: () => boolean, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}

function world(poolSize = 1) {
  const clock = new FixedClock(new Date('2026-01-01T00:00:00Z'));
  const runtime = new InMemorySandboxRuntime({ now: () => clock.now() });
  let slot = 0;
  const workspaces = new InMemoryWorkspaces(() => clock.now());
  const makePool = () => {
    const pool = new WarmPool({ runtime, workspaces, claims: new MemorySandboxClaims(), clock, nextSlot: () => `s${++slot}` });
    pool.configure([{ environmentId: 'env_a', config: config(poolSize) }]);
    return pool;
  };
  return { clock, runtime, makePool, workspaces };
}

describe('death watcher', () => {
  it('reports one death per session container (oom, die, destroy collapse) and drops dead warm ones from the pool', async () => {
    const { runtime, makePool } = world(1);
    const pool = makePool();
    pool.refill();
    await pool.idle();
    const abort = new AbortController();
    const deaths: SandboxDeath[] = [];
    const watching = watchSandboxDeaths({ runtime, signal: abort.signal, pool, onDeath: (d) => void deaths.push(d) });

    const box = await runtime.ensureRunning(sessionSandboxSpec({ sessionId: 'sesn_1', generation: 2, environmentId: 'env_a', config: config(1), workspace: { id: 'wss-test', mounts: [] } }));
    runtime.kill(box.id, { oom: true });
    await runtime.remove(box.id);
    const [warm] = await runtime.list({ 'berth.pool': 'env_a' });
    runtime.kill(warm.id);

    await until(() => deaths.length === 1 && pool.readyCount('env_a') === 1);
    await pool.idle();
    abort.abort();
    await watching;
    expect(deaths).toEqual([
      expect.objectContaining({ sessionId: 'sesn_1', generation: 2, sandboxId: sessionSandboxName('sesn_1', 2), reason: 'oom_killed', exitCode: 137 }),
    ]);
    const stillReady = (await runtime.list({ 'berth.pool': 'env_a' })).filter((i) => i.running);
    expect(stillReady.map((i) => i.id)).not.toContain(warm.id);
  });

  it('an OOM kill inside a container that lives on is not a death', async () => {
    const { runtime } = world(0);
    const abort = new AbortController();
    const deaths: SandboxDeath[] = [];
    const watching = watchSandboxDeaths({ runtime, signal: abort.signal, onDeath: (d) => void deaths.push(d) });
    const spec = (id: string) => sessionSandboxSpec({ sessionId: id, generation: 1, environmentId: 'env_a', config: config(0), workspace: { id: 'wss-test', mounts: [] } });
    const survivor = await runtime.ensureRunning(spec('sesn_survivor'));
    const victim = await runtime.ensureRunning(spec('sesn_victim'));
    runtime.oomInside(survivor.id);
    runtime.kill(victim.id);
    await until(() => deaths.length === 1);
    abort.abort();
    await watching;
    expect(deaths.map((d) => [d.sessionId, d.reason])).toEqual([['sesn_victim', 'exited']]);
    expect((await runtime.inspect(survivor.id))?.running).toBe(true);
  });
});

describe('restart reconcile', () => {
  it('a new manager adopts bound and warm containers without creating duplicates, and reaps orphans and old unmounted spares', async () => {
    const { runtime, clock, makePool, workspaces } = world(1);
    const first = makePool();
    first.refill();
    await first.idle();
    const bound = await first.claim({ environmentId: 'env_a', sessionId: 'sesn_1', generation: 1 });
    await first.idle();
    const orphan = await runtime.ensureRunning(sessionSandboxSpec({ sessionId: 'sesn_gone', generation: 1, environmentId: 'env_a', config: config(1), workspace: { id: 'wss-test', mounts: [] } }));
    const createdBefore = runtime.created;
    const leftover = await workspaces.createSpare(1024);
    clock.advance(SPARE_WORKSPACE_GRACE_MS);
    // Another manager's spare, made a moment ago for a warm container it has not created yet.
    const young = await workspaces.createSpare(1024);

    const second = makePool();
    const bindings = { listBound: async () => [{ sessionId: 'sesn_1', generation: 1, sandboxId: sessionSandboxName('sesn_1', 1), expiresAt: null }] };
    const plan = await reconcileAtStart({ runtime, bindings, pool: second, workspaces, clock, onDead: () => undefined });
    await second.idle();

    expect(plan.adopt.map((a) => a.sandbox.id)).toEqual([bound?.id]);
    expect(plan.warm).toHaveLength(1);
    expect(plan.reap.map((r) => r.sandbox.id)).toEqual([orphan.id]);
    expect(runtime.created).toBe(createdBefore);
    expect(second.readyCount('env_a')).toBe(1);
    // Spares a container still mounts stay (the claimed one here was never adopted by a provisioner), and so does the young one.
    const spares = (await workspaces.spares()).map((s) => s.id);
    expect(spares).not.toContain(leftover.id);
    expect(spares.sort()).toEqual([bound?.labels['berth.workspace'], plan.warm[0]?.sandbox.labels['berth.workspace'], young.id].sort());
    const again = await reconcileAtStart({ runtime, bindings, pool: second, workspaces, clock, onDead: () => undefined });
    expect(again.reap).toEqual([]);
  });

  it('reports bound containers that died while no manager was running', async () => {
    const { runtime, clock, makePool, workspaces } = world(0);
    const box = await runtime.ensureRunning(sessionSandboxSpec({ sessionId: 'sesn_1', generation: 3, environmentId: 'env_a', config: config(0), workspace: { id: 'wss-test', mounts: [] } }));
    runtime.kill(box.id);
    const deaths: SandboxDeath[] = [];
    await reconcileAtStart({
      runtime,
      bindings: { listBound: async () => [{ sessionId: 'sesn_1', generation: 3, sandboxId: box.name, expiresAt: null }] },
      pool: makePool(),
      workspaces,
      clock,
      onDead: (d) => void deaths.push(d),
    });
    expect(deaths).toEqual([expect.objectContaining({ sessionId: 'sesn_1', generation: 3, sandboxId: box.name })]);
  });
});

describe('lease sweep', () => {
  it('reports only bound sandboxes whose lease is in the past, and keeps going when one report fails', async () => {
    const clock = new FixedClock(new Date('2026-01-01T12:00:00Z'));
    const rows: BoundSandbox[] = [
      { sessionId: 'a', generation: 1, sandboxId: 'berth-s-a-g1', expiresAt: '2026-01-01T11:59:59Z' },
      { sessionId: 'b', generation: 1, sandboxId: 'berth-s-b-g1', expiresAt: '2026-01-01T12:00:01Z' },
      { sessionId: 'c', generation: 1, sandboxId: 'berth-s-c-g1', expiresAt: null },
      { sessionId: 'd', generation: 1, sandboxId: 'berth-s-d-g1', expiresAt: '2025-12-31T00:00:00' },
    ];
    const reported: string[] = [];
    const failed: string[] = [];
    const expired = await sweepExpiredLeases({
      bindings: { listBound: async () => rows },
      clock,
      onExpired: (b) => {
        if (b.sessionId === 'a') throw new Error('bus down');
        reported.push(b.sessionId);
      },
      onError: (_e, b) => failed.push(b.sessionId),
    });
    expect(expired.map((b) => b.sessionId)).toEqual(['a', 'd']);
    expect(reported).toEqual(['d']);
    expect(failed).toEqual(['a']);
  });
});
