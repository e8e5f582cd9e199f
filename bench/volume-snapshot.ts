/**
 * What forking a `volume` workspace would cost (the sandbox-manager cannot reach a Docker volume's
 * files from the host: every copy runs in a helper container that mounts the volumes). A volume
 * holding 100 MiB (100 files of 1 MiB), one 1 MiB file rewritten per turn, then, per turn:
 *   - floor: a helper container that does nothing (`true`): create, start, wait, remove; the least
 *     any per-turn helper adds to a turn's end;
 *   - linked: a per-turn snapshot as the `loop` kind takes it, in a helper mounting the workspace
 *     (read-only) and a snapshots volume: `cp -al` of the previous snapshot, the changed files copied;
 *   - full copy: the workspace copied whole into a fresh volume by a helper: what seeding a fork
 *     at fork time costs (once per fork, not per turn).
 * Printed: p50/p99 of each, and the bytes the linked snapshots add per turn.
 *
 *   DOCKER_HOST=… node -r @swc-node/register bench/volume-snapshot.ts [runs]
 *
 * Creates only volumes and containers labelled with this run's scope, and removes them.
 */
import { randomBytes } from 'node:crypto';
import Docker from 'dockerode';
import { ensureDockerTestEngine } from '@berth/testing';

const RUNS = Math.min(Number(process.argv[2] ?? 20), 100);
const scope = `bench-vol-${randomBytes(3).toString('hex')}`;
const labels = { 'berth.scope': scope };
const engine = ensureDockerTestEngine();
const docker = new Docker({ socketPath: new URL(engine.dockerHost).pathname });

const percentile = (values: readonly number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
};
const ms = (start: bigint): number => Number(process.hrtime.bigint() - start) / 1e6;

/** Runs `script` in a helper container with `binds`, waits for it and removes it; returns its stdout. */
async function helper(script: string, binds: readonly string[]): Promise<string> {
  const container = await docker.createContainer({
    Image: engine.baseImage,
    Cmd: ['sh', '-c', script],
    Labels: labels,
    // A TTY: its log is the plain output (no multiplexing headers).
    Tty: true,
    NetworkDisabled: true,
    HostConfig: { Binds: [...binds], NetworkMode: 'none' },
  });
  try {
    await container.start();
    const { StatusCode } = (await container.wait()) as { StatusCode: number };
    const raw: unknown = await container.logs({ stdout: true, stderr: true });
    const logs = Buffer.isBuffer(raw) ? raw.toString('utf8') : String(raw);
    if (StatusCode !== 0) throw new Error(`helper exited ${StatusCode}: ${logs}`);
    return logs;
  } finally {
    await container.remove({ force: true });
  }
}

async function volume(name: string): Promise<string> {
  await docker.createVolume({ Name: `${scope}-${name}`, Labels: labels });
  return `${scope}-${name}`;
}

async function main(): Promise<void> {
  const workspace = await volume('workspace');
  const snaps = await volume('snapshots');
  await helper('for i in $(seq 0 99); do head -c 1048576 /dev/urandom > /w/f$i.bin; done', [`${workspace}:/w`]);
  await helper('cp -a /w/. /s/turn_0 && touch /s/turn_0.stamp', [`${workspace}:/w:ro`, `${snaps}:/s`]);
  const floor: number[] = [];
  const linked: number[] = [];
  const added: number[] = [];
  const full: number[] = [];
  for (let n = 1; n <= RUNS; n++) {
    await helper(`head -c 1048576 /dev/urandom > /w/f${n % 100}.bin`, [`${workspace}:/w`]);
    let start = process.hrtime.bigint();
    await helper('true', [`${workspace}:/w:ro`]);
    floor.push(ms(start));

    const before = Number((await helper('du -sb /s | cut -f1', [`${snaps}:/s`])).trim());
    const link = [
      `cp -al /s/turn_${n - 1} /s/turn_${n}`,
      `cd /w && find . -type f -newer /s/turn_${n - 1}.stamp -exec cp -a --remove-destination {} /s/turn_${n}/{} \\;`,
      `touch /s/turn_${n}.stamp`,
    ].join(' && ');
    start = process.hrtime.bigint();
    await helper(link, [`${workspace}:/w:ro`, `${snaps}:/s`]);
    linked.push(ms(start));
    added.push(Number((await helper('du -sb /s | cut -f1', [`${snaps}:/s`])).trim()) - before);

    const fork = await volume(`fork-${n}`);
    start = process.hrtime.bigint();
    await helper('cp -a /w/. /f/', [`${workspace}:/w:ro`, `${fork}:/f`]);
    full.push(ms(start));
    await docker.getVolume(fork).remove();
  }
  const row = (name: string, values: readonly number[]) => console.log(`${name.padEnd(52)} p50 ${percentile(values, 50).toFixed(0).padStart(6)} ms   p99 ${percentile(values, 99).toFixed(0).padStart(6)} ms`);
  console.log(`volume workspace of 100 MiB (100 files), 1 MiB rewritten per turn, ${RUNS} runs`);
  row('helper container floor (create, start, wait, rm)', floor);
  row('per-turn linked snapshot in a helper', linked);
  row('fork-time full copy into a new volume (helper)', full);
  console.log(`bytes a linked snapshot adds: p50 ${percentile(added, 50)}  p99 ${percentile(added, 99)}`);
}

main()
  .catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(async () => {
    for (const c of await docker.listContainers({ all: true, filters: JSON.stringify({ label: [`berth.scope=${scope}`] }) })) await docker.getContainer(c.Id).remove({ force: true });
    for (const v of (await docker.listVolumes({ filters: JSON.stringify({ label: [`berth.scope=${scope}`] }) })).Volumes ?? []) await docker.getVolume(v.Name).remove().catch(() => undefined);
  });
