import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
// eslint-disable-next-line @nx/enforce-module-boundaries -- integration test: wires the real Docker adapter
import { DockerSandboxRuntime, EGRESS_DIR_LABEL, LoopWorkspaces } from '@berth/docker';
import { systemClock } from '@berth/core';
import type { BerthStore, SandboxRuntime } from '@berth/ports';
import { DEFAULT_SANDBOX_CONFIG, type SandboxConfig } from '@berth/sandbox-domain';
// eslint-disable-next-line @nx/enforce-module-boundaries -- the engine fixtures live in the testing library
import { ensureDockerTestEngine, releaseWorkspaceMounts, startPrivateDockerEngine, type PrivateDockerEngine } from '@berth/testing';
// eslint-disable-next-line @nx/enforce-module-boundaries -- integration test: the managers' shared store (SQLite)
import { createStore } from '@berth/store';
import { type SandboxDeath, watchSandboxDeaths } from './death-watcher';
import { LeaseLock } from './lease-lock';
import { MultiHostRuntime } from './multi-host-runtime';
import { SandboxProvisioner } from './sandbox-provisioner';

/**
 * Sandboxes on two Docker engines this test starts for itself (own sockets, data and exec roots,
 * pidfiles, `--bridge=none` like the shared one), behind one MultiHostRuntime: placement by free
 * places within each host's limit, a session's sandbox found on its host, and a host that stops
 * answering (its dockerd frozen with SIGSTOP: the machine gone from the network) reported lost,
 * the session's next sandbox on the other host with its workspace; two managers placing at once
 * through one store never pass a host's limit. The shared engine is only read
 * (the base image is copied from it).
 */
jest.setTimeout(240_000);

const shared = ensureDockerTestEngine();
const run = `h${randomBytes(4).toString('hex')}`;
const scopeLabels = { 'berth.test-run': run };
const counted = { 'berth.managed': 'true', ...scopeLabels };
const config: SandboxConfig = { ...DEFAULT_SANDBOX_CONFIG, image: shared.baseImage, network: 'none', memoryBytes: 128 * 1024 * 1024, nanoCpus: 500_000_000, pidsLimit: 64, workspaceBytes: 32 * 1024 * 1024 };
const dirs = { a: mkdtempSync('/tmp/bgh-a-'), b: mkdtempSync('/tmp/bgh-b-'), workspaces: mkdtempSync('/tmp/bgh-ws-') };
let engines: Record<'a' | 'b', PrivateDockerEngine>;
let runtimes: Record<'a' | 'b', DockerSandboxRuntime>;
const opened: MultiHostRuntime[] = [];

beforeAll(async () => {
  const [a, b] = await Promise.all([startPrivateDockerEngine('a'), startPrivateDockerEngine('b')]);
  engines = { a, b };
  const from = new DockerSandboxRuntime({ dockerHost: shared.dockerHost }).docker;
  await Promise.all([a.loadImage(shared.baseImage, from), b.loadImage(shared.baseImage, from)]);
  runtimes = {
    a: new DockerSandboxRuntime({ dockerHost: a.dockerHost, managedLabels: counted, egressRoot: dirs.a }),
    b: new DockerSandboxRuntime({ dockerHost: b.dockerHost, managedLabels: counted, egressRoot: dirs.b }),
  };
});

afterEach(async () => {
  for (const runtime of opened.splice(0)) runtime.close();
  for (const name of ['a', 'b'] as const) {
    engines[name].thaw();
    for (const info of await runtimes[name].list(counted)) await runtimes[name].remove(info.id);
  }
  releaseWorkspaceMounts(dirs.workspaces);
});

afterAll(async () => {
  await Promise.all([engines?.a.stop(), engines?.b.stop()]);
  for (const dir of Object.values(dirs)) rmSync(dir, { recursive: true, force: true });
});

const open = (limits: Record<'a' | 'b', number>, placementLock?: LeaseLock) => {
  const runtime = new MultiHostRuntime({
    hosts: (['a', 'b'] as const).map((name) => ({ name, runtime: runtimes[name], maxSandboxes: limits[name], ping: () => runtimes[name].docker.ping() })),
    countedLabels: counted,
    placementLock,
    probeMs: 200,
    pingTimeoutMs: 400,
    missesBeforeLost: 3,
  });
  opened.push(runtime);
  const workspaces = new LoopWorkspaces(dirs.workspaces);
  return { runtime, workspaces, provisioner: new SandboxProvisioner({ runtime, workspaces, scopeLabels }) };
};

const acquire = (provisioner: SandboxProvisioner, sessionId: string, generation = 1) =>
  provisioner.acquire({ sessionId, generation, environmentId: `env_${run}`, config });

async function shell(runtime: SandboxRuntime, sandbox: string, script: string): Promise<string> {
  const handle = await runtime.exec(sandbox, { cmd: ['sh', '-c', script] });
  const lines: string[] = [];
  for await (const line of handle.lines) lines.push(line);
  expect(await handle.exit).toBe(0);
  return lines.join('\n');
}

const onEngine = async (name: 'a' | 'b') => (await engines[name].docker.listContainers({ all: true, filters: { label: [`berth.test-run=${run}`] } })).map((c) => c.Names[0]?.slice(1));

async function until<T>(what: string, probe: () => Promise<T | null | undefined | false> | T | null | undefined | false, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('sandboxes on two Docker engines', () => {
  it('places each new sandbox on the host with the most free places, never past a host limit, and keeps a sandbox on its host', async () => {
    const { runtime, provisioner } = open({ a: 2, b: 3 });
    const placed: string[] = [];
    for (let i = 0; i < 5; i += 1) placed.push((await acquire(provisioner, `sesn_${run}_${i}`)).sandbox.host as string);
    // Free places before each: a 2 / b 3 → b; 2/2 → a (tie: listed first); 1/2 → b; 1/1 → a; 0/1 → b.
    expect(placed).toEqual(['b', 'a', 'b', 'a', 'b']);
    await expect(acquire(provisioner, `sesn_${run}_full`)).rejects.toThrow('every sandbox host is at its limit (a 2/2, b 3/3)');
    // What each engine itself holds.
    expect((await onEngine('a')).sort()).toEqual([`berth-s-sesn_${run}_1-g1`, `berth-s-sesn_${run}_3-g1`]);
    expect(await onEngine('b')).toHaveLength(3);

    // Each sandbox's egress directory is on its own host's egress root (the egress there serves it).
    const onA = await runtime.inspect(`berth-s-sesn_${run}_1-g1`);
    expect(onA?.host).toBe('a');
    const egressId = onA?.labels[EGRESS_DIR_LABEL] as string;
    expect(existsSync(join(dirs.a, egressId, 'name'))).toBe(true);
    expect(existsSync(join(dirs.b, egressId))).toBe(false);

    // Sticky: the session's sandbox is found where it runs, by a runtime that never saw it placed.
    const again = await acquire(open({ a: 2, b: 3 }).provisioner, `sesn_${run}_1`);
    expect(again).toMatchObject({ source: 'existing', sandbox: { host: 'a', id: onA?.id } });
    expect(await shell(runtime, `berth-s-sesn_${run}_3-g1`, 'cat /etc/hostname')).toBe((await engines.a.docker.getContainer(`berth-s-sesn_${run}_3-g1`).inspect()).Config.Hostname);

    // A place freed on a goes to the next sandbox.
    await provisioner.release(`berth-s-sesn_${run}_3-g1`);
    expect((await acquire(provisioner, `sesn_${run}_5`)).sandbox.host).toBe('a');
  });

  it('a host that stops answering: its sandboxes are reported lost, the session goes on on the other host with its workspace', async () => {
    const { runtime, provisioner } = open({ a: 4, b: 4 });
    const sessionId = `sesn_${run}_moving`;
    const first = await acquire(provisioner, sessionId);
    expect(first.sandbox.host).toBe('a');
    await shell(runtime, first.sandbox.name, 'echo "written on a" > /workspace/note.txt');
    const deaths: SandboxDeath[] = [];
    const watching = new AbortController();
    const watched = watchSandboxDeaths({ runtime, signal: watching.signal, scopeLabels, onDeath: (death) => void deaths.push(death) });

    const frozenAt = Date.now();
    engines.a.freeze();
    const death = await until('the sandbox on the frozen host reported lost', () => deaths.find((d) => d.sessionId === sessionId));
    const lostAfterMs = Date.now() - frozenAt;
    expect(death).toMatchObject({ generation: 1, sandboxId: first.sandbox.name, reason: 'host_lost', containerId: first.sandbox.id });
    // Three missed pings 200 ms apart, each given 400 ms: lost within a few seconds, never "after the TCP timeout".
    expect(lostAfterMs).toBeLessThan(10_000);
    // Nothing waits on the frozen engine any more: the old sandbox is simply not found.
    expect(await runtime.inspect(first.sandbox.name)).toBeNull();
    await expect(runtime.exec(first.sandbox.name, { cmd: ['true'] })).rejects.toThrow('on any sandbox host that answers');

    const next = await acquire(provisioner, sessionId, 2);
    expect(next).toMatchObject({ source: 'cold', sandbox: { host: 'b' }, workspaceId: first.workspaceId });
    expect(await shell(runtime, next.sandbox.name, 'cat /workspace/note.txt')).toBe('written on a');

    // The host answers again: it takes sandboxes again, and what was reported lost on it is removed.
    engines.a.thaw();
    await until('the lost sandbox removed from the host that came back', async () => (await onEngine('a')).length === 0);
    expect((await acquire(provisioner, `sesn_${run}_after`)).sandbox.host).toBe('a');
    watching.abort();
    await watched;
    expect(deaths.filter((d) => d.sessionId === sessionId)).toHaveLength(1);
  });

  it('two managers placing at once through one store never pass a host limit', async () => {
    // Two managers: each its own runtime and its own connection to the one SQLite file.
    const stores: BerthStore[] = [createStore(`sqlite:${join(dirs.workspaces, 'store.db')}`), createStore(`sqlite:${join(dirs.workspaces, 'store.db')}`)];
    try {
      for (const store of stores) await store.init();
      const managers = stores.map((store, i) => open({ a: 2, b: 2 }, new LeaseLock(store.leases, `manager-${i}`, systemClock)));
      const sessions = managers.flatMap((m, i) => [0, 1, 2].map((j) => ({ manager: m, sessionId: `sesn_${run}_m${i}_${j}` })));
      // Workspaces first, so that the six placements race each other rather than the filesystems.
      for (const { manager, sessionId } of sessions) await manager.workspaces.forSession(sessionId, config.workspaceBytes);
      const results = await Promise.allSettled(sessions.map(({ manager, sessionId }) => acquire(manager.provisioner, sessionId)));
      const placed = results.filter((r) => r.status === 'fulfilled');
      const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect((await onEngine('a')).length).toBeLessThanOrEqual(2);
      expect((await onEngine('b')).length).toBeLessThanOrEqual(2);
      expect(placed).toHaveLength(4);
      expect(refused.map((r) => String(r.reason))).toEqual([expect.stringContaining('every sandbox host is at its limit (a 2/2, b 2/2)'), expect.stringContaining('every sandbox host is at its limit (a 2/2, b 2/2)')]);
      // Nothing created for a refused placement is left behind, and the lease is free again.
      expect(await onEngine('a')).toHaveLength(2);
      expect(await onEngine('b')).toHaveLength(2);
      expect(await stores[0]?.leases.get('sandbox-placement:a,b')).toBeNull();
    } finally {
      for (const store of stores) await store.close();
    }
  });
});
