import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { systemClock } from '@berth/core';
// eslint-disable-next-line @nx/enforce-module-boundaries -- integration test: wires the real Docker adapter
import { DockerSandboxRuntime, VolumeWorkspaces } from '@berth/docker';
import { DEFAULT_SANDBOX_CONFIG, type SandboxConfig, sessionSandboxName } from '@berth/sandbox-domain';
// eslint-disable-next-line @nx/enforce-module-boundaries -- the shared engine fixture lives in the testing library
import { ensureDockerTestEngine, MemorySandboxClaims } from '@berth/testing';
import { type SandboxDeath, watchSandboxDeaths } from './death-watcher';
import { SandboxProvisioner } from './sandbox-provisioner';
import { reconcileAtStart } from './startup-reconcile';
import { WarmPool } from './warm-pool';

jest.setTimeout(90_000);

const engine = ensureDockerTestEngine();
const run = `t${randomBytes(4).toString('hex')}`;
const scopeLabels = { 'berth.test-run': run };
const environmentId = `env_${run}`;
const config = (size: number): SandboxConfig => ({
  ...DEFAULT_SANDBOX_CONFIG,
  image: engine.baseImage,
  network: 'none',
  memoryBytes: 128 * 1024 * 1024,
  nanoCpus: 500_000_000,
  pidsLimit: 64,
  warmPool: { size, ttlSeconds: 600 },
});
let slot = 0;
// Sandboxes carry their egress directory, as in production.
const egressRoot = mkdtempSync('/tmp/bgl-');
const newManager = (size: number, claims = new MemorySandboxClaims()) => {
  const runtime = new DockerSandboxRuntime({ dockerHost: engine.dockerHost, egressRoot });
  const workspaces = new VolumeWorkspaces(runtime.docker, scopeLabels);
  const pool = new WarmPool({ runtime, workspaces, claims, clock: systemClock, nextSlot: () => `${run.slice(1)}${++slot}`, scopeLabels });
  pool.configure([{ environmentId, config: config(size) }]);
  return { runtime, pool, claims, workspaces, provisioner: new SandboxProvisioner({ runtime, workspaces, pool, scopeLabels }) };
};
const cleanupRuntime = new DockerSandboxRuntime({ dockerHost: engine.dockerHost, egressRoot });
const ours = () => cleanupRuntime.list({ ...scopeLabels, 'berth.managed': 'true' });

afterEach(async () => {
  for (const info of await ours()) await cleanupRuntime.remove(info.id);
});
afterAll(() => rmSync(egressRoot, { recursive: true, force: true }));

afterAll(async () => {
  const { Volumes } = await cleanupRuntime.docker.listVolumes({ filters: JSON.stringify({ label: [`berth.test-run=${run}`] }) });
  for (const volume of Volumes ?? []) await cleanupRuntime.docker.getVolume(volume.Name).remove();
});

async function until(condition: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('sandbox lifecycle on the real engine', () => {
  it('concurrent claims of one warm container from two managers: exactly one wins', async () => {
    const claims = new MemorySandboxClaims();
    const a = newManager(1, claims);
    a.pool.refill();
    await a.pool.idle();
    const [warm] = await ours();
    const b = newManager(1, claims);
    b.pool.adopt([{ sandbox: warm, environmentId }]);
    // No refills: this is about the one container both managers believe is free.
    a.pool.configure([{ environmentId, config: config(0) }]);
    b.pool.configure([{ environmentId, config: config(0) }]);

    const claimed = await Promise.all(
      Array.from({ length: 6 }, (_, i) => (i % 2 ? b : a).pool.claim({ environmentId, sessionId: `sesn_${run}_${i}`, generation: 1 })),
    );
    const winners = claimed.filter((c) => c !== null);
    expect(winners).toHaveLength(1);
    const winner = winners[0]!;
    const after = await cleanupRuntime.inspect(warm.id);
    expect(after?.name).toBe(winner.name);
    expect((await ours()).map((i) => i.name)).toEqual([winner.name]);
  });

  it('a restarted manager adopts bound and warm containers without creating duplicates, and reaps orphans', async () => {
    const first = newManager(2);
    first.pool.refill();
    await first.pool.idle();
    const bound = await first.provisioner.acquire({ sessionId: `sesn_${run}_a`, generation: 1, environmentId, config: config(2) });
    expect(bound.source).toBe('warm');
    await first.pool.idle();
    const orphan = await first.provisioner.acquire({ sessionId: `sesn_${run}_orphan`, generation: 1, environmentId, config: config(2) });
    await first.pool.idle();
    const before = (await ours()).map((i) => i.id).sort();
    expect(before).toHaveLength(4);

    // "Restart": a brand-new runtime and pool, knowing only what the store binds.
    const second = newManager(2);
    const bindings = { listBound: async () => [{ sessionId: `sesn_${run}_a`, generation: 1, sandboxId: bound.sandbox.name, expiresAt: null }] };
    const plan = await reconcileAtStart({ runtime: second.runtime, bindings, pool: second.pool, workspaces: second.workspaces, clock: systemClock, onDead: () => undefined, scopeLabels });
    await second.pool.idle();
    expect(plan.adopt.map((x) => x.sandbox.id)).toEqual([bound.sandbox.id]);
    expect(plan.warm).toHaveLength(2);
    expect(plan.reap.map((x) => x.sandbox.id)).toEqual([orphan.sandbox.id]);
    const after = (await ours()).map((i) => i.id).sort();
    expect(after).toEqual(before.filter((id) => id !== orphan.sandbox.id));

    // The session asking again gets the very same container.
    const again = await second.provisioner.acquire({ sessionId: `sesn_${run}_a`, generation: 1, environmentId, config: config(2) });
    expect(again).toMatchObject({ source: 'existing', sandbox: { id: bound.sandbox.id } });
  });

  it('docker kill of a session container → one death reported within seconds (pushed, not polled)', async () => {
    const manager = newManager(0);
    const { sandbox } = await manager.provisioner.acquire({ sessionId: `sesn_${run}_k`, generation: 4, environmentId, config: config(0) });
    const abort = new AbortController();
    const deaths: (SandboxDeath & { seenAt: number })[] = [];
    const watching = watchSandboxDeaths({ runtime: manager.runtime, signal: abort.signal, scopeLabels, onDeath: (d) => void deaths.push({ ...d, seenAt: Date.now() }) });
    // Wait until the subscription is live: a throwaway session container's death is seen.
    const probe = await manager.provisioner.acquire({ sessionId: `sesn_${run}_probe`, generation: 1, environmentId, config: config(0) });
    await until(async () => {
      await manager.runtime.stop(probe.sandbox.id, 0);
      return deaths.some((d) => d.containerId === probe.sandbox.id);
    });
    const killedAt = Date.now();
    execFileSync('docker', ['kill', sandbox.id], { env: { ...process.env, DOCKER_HOST: engine.dockerHost } });
    await until(() => deaths.some((d) => d.containerId === sandbox.id), 5000);
    await manager.runtime.remove(sandbox.id);
    await new Promise((r) => setTimeout(r, 200));
    abort.abort();
    await watching;
    const mine = deaths.filter((d) => d.containerId === sandbox.id);
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ sessionId: `sesn_${run}_k`, generation: 4, sandboxId: sessionSandboxName(`sesn_${run}_k`, 4), reason: 'exited', exitCode: 137 });
    // Pushed by the engine's event stream, not found by a later sweep; the bound leaves room for the
    // docker CLI's own start on a loaded 2-core machine (1.4–1.6 s seen there), not for a poll.
    expect(mine[0].seenAt - killedAt).toBeLessThan(5000);
  });

  it('an OOM kill of a process inside a sandbox is not reported as the sandbox dying', async () => {
    const manager = newManager(0);
    const small = { ...config(0), memoryBytes: 64 * 1024 * 1024 };
    const acquire = (id: string) => manager.provisioner.acquire({ sessionId: `sesn_${run}_${id}`, generation: 1, environmentId, config: small });
    const { sandbox } = await acquire('oom');
    const abort = new AbortController();
    const deaths: SandboxDeath[] = [];
    const kinds: string[] = [];
    const raw = (async () => {
      for await (const e of manager.runtime.events(abort.signal)) if (e.containerId === sandbox.id) kinds.push(e.kind);
    })();
    const watching = watchSandboxDeaths({ runtime: manager.runtime, signal: abort.signal, scopeLabels, onDeath: (d) => void deaths.push(d) });
    // Both subscriptions are live once a throwaway sandbox's death has come through.
    const seenDeathOf = async (id: string) => {
      const probe = await acquire(id);
      await until(async () => {
        await manager.runtime.stop(probe.sandbox.id, 0);
        return deaths.some((d) => d.containerId === probe.sandbox.id);
      });
    };
    await seenDeathOf('probe1');
    // `tail -n 1` holds its whole newline-free input in memory: far past the 64 MiB limit.
    const hog = await manager.runtime.exec(sandbox.id, { cmd: ['/bin/sh', '-c', 'head -c 400000000 /dev/zero | tail -n 1 >/dev/null'] });
    expect(await hog.exit).toBe(137);
    await until(() => kinds.includes('oom'), 5000);
    // Events arrive in order: once a later death is reported, the oom has been handled too.
    await seenDeathOf('probe2');
    abort.abort();
    await Promise.all([raw, watching]);
    expect(deaths.filter((d) => d.containerId === sandbox.id)).toEqual([]);
    expect((await manager.runtime.inspect(sandbox.id))?.running).toBe(true);
  });
});
