/**
 * Sandbox start latency: a cold start and a warm-pool claim through Berth's provisioner (each with
 * the session's workspace: cold makes one, a claim adopts the warm container's spare), beside a bare
 * dockerode createContainer + start of the same image, measured in one run (interleaved, so
 * engine conditions are shared). The workspace kind is what the sandbox-manager would pick here
 * (`loop` as root on the engine host, else `volume`). Targets: cold ≤ 1.3× bare; warm claim p50 ≤ 20 ms.
 *
 *   node -r @swc-node/register bench/sandbox-start.ts [iterations] [image]
 *
 * Starts Berth's engine and builds the base image if needed (scripts/docker); removes every
 * container it created.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemClock } from '@berth/core';
import { detectWorkspaceKind, DockerSandboxRuntime, LoopWorkspaces, VolumeWorkspaces } from '@berth/docker';
import { DEFAULT_SANDBOX_CONFIG, KEEPALIVE_CMD, type SandboxConfig } from '@berth/sandbox-domain';
import { SandboxProvisioner, WarmPool } from '@berth/sandbox-lifecycle';
import { ensureDockerTestEngine, MemorySandboxClaims } from '@berth/testing';

const ITERATIONS = Number(process.argv[2] ?? 30);
const engine = ensureDockerTestEngine();
const IMAGE = process.argv[3] ?? engine.baseImage;
const run = `b${randomBytes(3).toString('hex')}`;
const scopeLabels = { 'berth.bench-run': run };
const environmentId = `env_${run}`;
const config: SandboxConfig = {
  ...DEFAULT_SANDBOX_CONFIG,
  image: IMAGE,
  network: 'none',
  memoryBytes: 256 * 1024 * 1024,
  nanoCpus: 1_000_000_000,
  pidsLimit: 128,
  workspaceBytes: 1024 * 1024 * 1024,
  warmPool: { size: 2, ttlSeconds: 600 },
};

// Berth's sandboxes carry their egress directory (made before create, bind-mounted, removed after), as in production.
const egressRoot = mkdtempSync('/tmp/bgb-');
const runtime = new DockerSandboxRuntime({ dockerHost: engine.dockerHost, egressRoot });
const docker = runtime.docker;
const workspaceDir = mkdtempSync(join(tmpdir(), 'berth-bench-ws-'));

const percentile = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
};
const ms = (start: bigint): number => Number(process.hrtime.bigint() - start) / 1e6;
const fmt = (v: number): string => v.toFixed(1).padStart(7);

async function bareStart(i: number): Promise<number> {
  const t = process.hrtime.bigint();
  const container = await docker.createContainer({
    name: `bench-bare-${run}-${i}`,
    Image: IMAGE,
    Cmd: [...KEEPALIVE_CMD],
    Labels: scopeLabels,
    HostConfig: { NetworkMode: 'none' },
  });
  await container.start();
  const elapsed = ms(t);
  await container.remove({ force: true });
  return elapsed;
}

async function main(): Promise<void> {
  const detected = await detectWorkspaceKind(docker);
  const workspaces = detected.kind === 'loop' ? new LoopWorkspaces(workspaceDir) : new VolumeWorkspaces(docker, scopeLabels);
  const cold = new SandboxProvisioner({ runtime, workspaces, scopeLabels });
  const coldStart = async (i: number): Promise<number> => {
    const sessionId = `sesn_${run}_c${i}`;
    const t = process.hrtime.bigint();
    const { sandbox } = await cold.acquire({ sessionId, generation: 1, environmentId, config });
    const elapsed = ms(t);
    await runtime.remove(sandbox.id);
    await workspaces.removeSession(sessionId);
    return elapsed;
  };
  console.log(`sandbox start: ${ITERATIONS} iterations each, image ${IMAGE}, engine ${engine.dockerHost}, ${detected.kind} workspaces (${detected.reason})`);
  await bareStart(-1);
  await coldStart(-1);
  const bare: number[] = [];
  const colds: number[] = [];
  for (let i = 0; i < ITERATIONS; i++) {
    bare.push(await bareStart(i));
    colds.push(await coldStart(i));
  }

  let slot = 0;
  const pool = new WarmPool({ runtime, workspaces, claims: new MemorySandboxClaims(), clock: systemClock, nextSlot: () => `${run.slice(1)}${++slot}`, scopeLabels });
  const provisioner = new SandboxProvisioner({ runtime, workspaces, pool, scopeLabels });
  pool.configure([{ environmentId, config }]);
  pool.refill();
  await pool.idle();
  const warm: number[] = [];
  for (let i = 0; i < ITERATIONS; i++) {
    const sessionId = `sesn_${run}_w${i}`;
    const t = process.hrtime.bigint();
    const claimed = await provisioner.acquire({ sessionId, generation: 1, environmentId, config });
    const elapsed = ms(t);
    if (claimed.source !== 'warm') throw new Error('warm pool was empty: refill did not keep up');
    warm.push(elapsed);
    // Let the refill finish so each claim measures the claim, not a concurrent container start.
    await pool.idle();
    await runtime.remove(claimed.sandbox.id);
    await workspaces.removeSession(sessionId);
  }
  pool.configure([]);
  await pool.sweep();
  await pool.idle();
  for (const leftover of await runtime.list(scopeLabels)) await runtime.remove(leftover.id);
  for (const spare of await workspaces.spares()) await workspaces.removeSpare(spare.id);
  rmSync(workspaceDir, { recursive: true, force: true });
  rmSync(egressRoot, { recursive: true, force: true });

  console.log(`                          p50 ms   p99 ms`);
  console.log(`bare create+start      ${fmt(percentile(bare, 50))}  ${fmt(percentile(bare, 99))}`);
  console.log(`cold start + workspace ${fmt(percentile(colds, 50))}  ${fmt(percentile(colds, 99))}`);
  console.log(`warm claim + adopt     ${fmt(percentile(warm, 50))}  ${fmt(percentile(warm, 99))}`);
  const ratio = percentile(colds, 50) / percentile(bare, 50);
  console.log(`cold / bare (p50): ${ratio.toFixed(2)}x  (target ≤ 1.30x)`);
  console.log(`warm claim p50: ${percentile(warm, 50).toFixed(1)} ms (target ≤ 20 ms); warm / bare (p50): ${(percentile(warm, 50) / percentile(bare, 50)).toFixed(3)}x`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
