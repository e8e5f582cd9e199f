/**
 * Sandbox start latency: warm-pool claim and cold `ensureRunning` through Berth's runtime, beside
 * a bare dockerode createContainer + start of the same image, measured in one run (interleaved,
 * so engine conditions are shared). Berth's sandboxes carry their egress directory (made before
 * create, bind-mounted, removed after) as they do in production. Targets: cold ≤ 1.05× bare;
 * warm claim p50 ≤ 3 ms.
 *
 *   node -r @swc-node/register bench/sandbox-start.ts [iterations] [image]
 *
 * Starts Berth's engine and builds the base image if needed (scripts/docker); removes every
 * container it created.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { systemClock } from '@berth/core';
import { DockerSandboxRuntime } from '@berth/docker';
import { DEFAULT_SANDBOX_CONFIG, KEEPALIVE_CMD, type SandboxConfig, sessionSandboxSpec } from '@berth/sandbox-domain';
import { InMemoryClaimLedger, WarmPool } from '@berth/sandbox-lifecycle';
import { ensureDockerTestEngine } from '@berth/testing';

const ITERATIONS = Number(process.argv[2] ?? 30);
const engine = ensureDockerTestEngine();
const IMAGE = process.argv[3] ?? engine.baseImage;
const run = `b${randomBytes(3).toString('hex')}`;
const scopeLabels = { 'berth.bench-run': run };
const environmentId = `env_${run}`;
const config: SandboxConfig = {
  ...DEFAULT_SANDBOX_CONFIG,
  image: IMAGE,
  network: 'egress',
  memoryBytes: 256 * 1024 * 1024,
  nanoCpus: 1_000_000_000,
  pidsLimit: 128,
  warmPool: { size: 2, ttlSeconds: 600 },
};

const egressRoot = mkdtempSync('/tmp/bgb-');
const runtime = new DockerSandboxRuntime({ dockerHost: engine.dockerHost, egressRoot });
const docker = runtime.docker;

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

async function coldStart(i: number): Promise<number> {
  const spec = sessionSandboxSpec({ sessionId: `sesn_${run}_c${i}`, generation: 1, environmentId, config });
  const t = process.hrtime.bigint();
  const info = await runtime.ensureRunning({ ...spec, labels: { ...spec.labels, ...scopeLabels } });
  const elapsed = ms(t);
  await runtime.remove(info.id);
  return elapsed;
}

async function main(): Promise<void> {
  console.log(`sandbox start: ${ITERATIONS} iterations each, image ${IMAGE}, engine ${engine.dockerHost}`);
  await bareStart(-1);
  await coldStart(-1);
  const bare: number[] = [];
  const cold: number[] = [];
  for (let i = 0; i < ITERATIONS; i++) {
    bare.push(await bareStart(i));
    cold.push(await coldStart(i));
  }

  let slot = 0;
  const pool = new WarmPool({ runtime, ledger: new InMemoryClaimLedger(), clock: systemClock, nextSlot: () => `${run.slice(1)}${++slot}`, scopeLabels });
  pool.configure([{ environmentId, config }]);
  pool.refill();
  await pool.idle();
  const warm: number[] = [];
  for (let i = 0; i < ITERATIONS; i++) {
    const t = process.hrtime.bigint();
    const claimed = await pool.claim({ environmentId, sessionId: `sesn_${run}_w${i}`, generation: 1 });
    const elapsed = ms(t);
    if (!claimed) throw new Error('warm pool was empty: refill did not keep up');
    warm.push(elapsed);
    // Let the refill finish so each claim measures the claim, not a concurrent container start.
    await pool.idle();
    await runtime.remove(claimed.id);
  }
  pool.configure([]);
  await pool.sweep();
  await pool.idle();
  for (const leftover of await runtime.list(scopeLabels)) await runtime.remove(leftover.id);
  rmSync(egressRoot, { recursive: true, force: true });

  console.log(`                          p50 ms   p99 ms`);
  console.log(`bare create+start      ${fmt(percentile(bare, 50))}  ${fmt(percentile(bare, 99))}`);
  console.log(`cold ensureRunning     ${fmt(percentile(cold, 50))}  ${fmt(percentile(cold, 99))}`);
  console.log(`warm-pool claim        ${fmt(percentile(warm, 50))}  ${fmt(percentile(warm, 99))}`);
  const ratio = percentile(cold, 50) / percentile(bare, 50);
  console.log(`cold / bare (p50): ${ratio.toFixed(2)}x  (target ≤ 1.05x, with the egress directory in place)`);
  console.log(`warm claim p50: ${percentile(warm, 50).toFixed(1)} ms (target ≤ 3 ms); warm / bare (p50): ${(percentile(warm, 50) / percentile(bare, 50)).toFixed(3)}x`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
