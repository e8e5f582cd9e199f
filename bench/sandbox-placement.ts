/**
 * Sandbox placement across two Docker engines: sessions started through Berth's provisioner on a
 * MultiHostRuntime over two engines this script starts for itself (own sockets and data roots,
 * `--bridge=none`), with unequal limits. Prints where each sandbox went (per host, against its
 * limit), the cold start through the multi-host runtime beside a cold start on one engine's own
 * runtime in the same run (the placement's cost: a count on each host and the create, under the
 * store's placement lease as a manager holds it, here on a SQLite file), and how long a host
 * frozen with SIGSTOP takes to be reported lost.
 *
 *   node -r @swc-node/register bench/sandbox-placement.ts [sessions] [concurrency]
 *
 * Needs root and dockerd (scripts/docker/ensure-engine.sh installs it); copies the base image from
 * Berth's engine; stops its engines and removes everything it made.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { systemClock } from '@berth/core';
import { DockerSandboxRuntime, LoopWorkspaces } from '@berth/docker';
import { DEFAULT_SANDBOX_CONFIG, type SandboxConfig } from '@berth/sandbox-domain';
import { LeaseLock, MultiHostRuntime, SandboxProvisioner, watchSandboxDeaths } from '@berth/sandbox-lifecycle';
import { createStore } from '@berth/store';
import { ensureDockerTestEngine, releaseWorkspaceMounts, startPrivateDockerEngine } from '@berth/testing';

const SESSIONS = Number(process.argv[2] ?? 16);
const CONCURRENCY = Number(process.argv[3] ?? 4);
const LIMITS = { a: Math.ceil(SESSIONS * 0.375), b: SESSIONS } as const;
const shared = ensureDockerTestEngine();
const run = `p${randomBytes(3).toString('hex')}`;
const scopeLabels = { 'berth.bench-run': run };
const counted = { 'berth.managed': 'true', ...scopeLabels };
const config: SandboxConfig = { ...DEFAULT_SANDBOX_CONFIG, image: shared.baseImage, network: 'none', memoryBytes: 128 * 1024 * 1024, nanoCpus: 500_000_000, pidsLimit: 64, workspaceBytes: 64 * 1024 * 1024 };

const percentile = (values: number[], p: number): number => {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
};
const ms = (start: bigint): number => Number(process.hrtime.bigint() - start) / 1e6;

async function inBatches<T>(count: number, size: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  for (let i = 0; i < count; i += size) results.push(...(await Promise.all(Array.from({ length: Math.min(size, count - i) }, (_, j) => task(i + j)))));
  return results;
}

async function main(): Promise<void> {
  const dirs = { a: mkdtempSync('/tmp/bgp-a-'), b: mkdtempSync('/tmp/bgp-b-'), single: mkdtempSync('/tmp/bgp-s-'), workspaces: mkdtempSync('/tmp/bgp-ws-'), store: mkdtempSync('/tmp/bgp-db-') };
  const store = createStore(`sqlite:${join(dirs.store, 'berth.db')}`);
  await store.init();
  const engines = await Promise.all([startPrivateDockerEngine('a'), startPrivateDockerEngine('b')]);
  const [a, b] = engines;
  let multi: MultiHostRuntime | null = null;
  try {
    const from = new DockerSandboxRuntime({ dockerHost: shared.dockerHost }).docker;
    await Promise.all(engines.map((e) => e.loadImage(shared.baseImage, from)));
    const runtimes = {
      a: new DockerSandboxRuntime({ dockerHost: a.dockerHost, managedLabels: counted, egressRoot: dirs.a }),
      b: new DockerSandboxRuntime({ dockerHost: b.dockerHost, managedLabels: counted, egressRoot: dirs.b }),
    };
    multi = new MultiHostRuntime({
      hosts: (['a', 'b'] as const).map((name) => ({ name, runtime: runtimes[name], maxSandboxes: LIMITS[name], ping: () => runtimes[name].docker.ping() })),
      countedLabels: counted,
      placementLock: new LeaseLock(store.leases, `bench-${run}`, systemClock),
      probeMs: 200,
      pingTimeoutMs: 400,
      missesBeforeLost: 3,
    });
    const workspaces = new LoopWorkspaces(dirs.workspaces);
    const placed = new SandboxProvisioner({ runtime: multi, workspaces, scopeLabels });
    // The same provisioner on engine b's own runtime: the cost of a cold start without placement (other labels: not counted against b's limit).
    const aside = { 'berth.bench-run': `${run}-one` };
    const single = new SandboxProvisioner({ runtime: new DockerSandboxRuntime({ dockerHost: b.dockerHost, managedLabels: { 'berth.managed': 'true', ...aside }, egressRoot: dirs.single }), workspaces, scopeLabels: aside });

    const placedMs: number[] = [];
    const singleMs: number[] = [];
    const hosts: string[] = [];
    await inBatches(SESSIONS, CONCURRENCY, async (i) => {
      let t = process.hrtime.bigint();
      const got = await placed.acquire({ sessionId: `sesn_${run}_m${i}`, generation: 1, environmentId: `env_${run}`, config });
      placedMs.push(ms(t));
      hosts.push(got.sandbox.host ?? '?');
      t = process.hrtime.bigint();
      const bare = await single.acquire({ sessionId: `sesn_${run}_s${i}`, generation: 1, environmentId: `env_${run}`, config });
      singleMs.push(ms(t));
      await single.release(bare.sandbox.name, 1);
    });
    const count = (host: string) => hosts.filter((h) => h === host).length;
    const loads = await multi.loads();
    console.log(`sandbox placement: ${SESSIONS} sessions, ${CONCURRENCY} at once, two engines (limits a ${LIMITS.a}, b ${LIMITS.b}), load average ${(await import('node:os')).loadavg()[0]?.toFixed(1)}`);
    console.log(`  placed on a: ${count('a')} / ${LIMITS.a}   on b: ${count('b')} / ${LIMITS.b}   (engines list: ${loads.map((l) => `${l.host} ${l.sandboxes}`).join(', ')})`);
    console.log(`  order: ${hosts.join('')}`);
    console.log(`  cold start, placed:     p50 ${percentile(placedMs, 50).toFixed(1)} ms  p99 ${percentile(placedMs, 99).toFixed(1)} ms`);
    console.log(`  cold start, one engine: p50 ${percentile(singleMs, 50).toFixed(1)} ms  p99 ${percentile(singleMs, 99).toFixed(1)} ms  (placed/one = ${(percentile(placedMs, 50) / percentile(singleMs, 50)).toFixed(2)}× at p50)`);

    const watching = new AbortController();
    const lost: number[] = [];
    const frozenAt = Date.now();
    const watched = watchSandboxDeaths({ runtime: multi, signal: watching.signal, scopeLabels, onDeath: () => void lost.push(Date.now() - frozenAt) });
    a.freeze();
    while (lost.length < count('a')) await new Promise((r) => setTimeout(r, 20));
    console.log(`  host a frozen: its ${lost.length} sandboxes reported lost after ${Math.min(...lost)}–${Math.max(...lost)} ms (probe every 200 ms, 3 misses of 400 ms)`);
    const t = process.hrtime.bigint();
    const moved = await placed.acquire({ sessionId: `sesn_${run}_m0`, generation: 2, environmentId: `env_${run}`, config });
    console.log(`  its first session's next sandbox: on ${moved.sandbox.host} in ${ms(t).toFixed(1)} ms, workspace kept: ${moved.workspaceId}`);
    a.thaw();
    watching.abort();
    await watched;
  } finally {
    multi?.close();
    await store.close();
    await Promise.all(engines.map((e) => e.stop()));
    releaseWorkspaceMounts(dirs.workspaces);
    for (const dir of Object.values(dirs)) rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
