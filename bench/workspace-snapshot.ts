/**
 * The cost of a per-turn workspace snapshot (what a fork starts from): a `loop` workspace holding
 * 100 MiB (100 files of 1 MiB), each turn rewrites one 1 MiB file, then `LoopWorkspaceSnapshots.take`
 * runs as the sandbox-manager runs it at a turn's end (freeze, hard-link walk, retention). Printed:
 * time and bytes per snapshot (median, p99), the bytes the session's snapshots hold on disk, and the
 * raw operation in the same run: a full `cp -a` of the same 100 MiB tree (what a snapshot without
 * links would cost). Also how long seeding a fork's workspace from a snapshot takes.
 *
 *   node -r @swc-node/register bench/workspace-snapshot.ts [runs]
 *
 * Needs what `loop` workspaces need (root, mount, mkfs.ext4, fsfreeze); writes only below a temp dir.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LoopWorkspaceSnapshots, LoopWorkspaces } from '@berth/docker';

const RUNS = Math.min(Number(process.argv[2] ?? 30), 200);
const FILES = 100;
const MiB = 1024 * 1024;
const root = mkdtempSync(join(process.env.BERTH_BENCH_DIR ?? tmpdir(), 'berth-bench-snap-'));
const session = `sesn_bench${randomBytes(3).toString('hex')}`;

const percentile = (values: readonly number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
};
const ms = (start: bigint): number => Number(process.hrtime.bigint() - start) / 1e6;
const du = (path: string): number => Number(execFileSync('du', ['-sb', path], { encoding: 'utf8' }).split('\t')[0]);

async function main(): Promise<void> {
  const workspaces = new LoopWorkspaces(root);
  const snapshots = new LoopWorkspaceSnapshots(root, workspaces);
  await workspaces.forSession(session, 1024 * MiB);
  const mount = (await workspaces.hostRoot(session)) as string;
  const tree = join(mount, 'workspace');
  const write = (i: number) => {
    const file = join(tree, `f${String(i).padStart(3, '0')}.bin`);
    writeFileSync(file, randomBytes(MiB));
    chownSync(file, 1000, 1000);
  };
  for (let i = 0; i < FILES; i++) write(i);
  const retention = { keep: 10, maxBytes: 2048 * MiB };
  await snapshots.take(session, 'turn_0', retention);

  const times: number[] = [];
  const bytes: number[] = [];
  const copies: number[] = [];
  for (let n = 1; n <= RUNS; n++) {
    write(n % FILES);
    execFileSync('sync');
    const start = process.hrtime.bigint();
    const taken = await snapshots.take(session, `turn_${n}`, retention);
    times.push(ms(start));
    bytes.push(taken?.bytes ?? NaN);
    // The raw operation, same tree, same moment: a full copy.
    const copy = join(root, `copy-${n}`);
    const copyStart = process.hrtime.bigint();
    execFileSync('cp', ['-a', tree, copy]);
    copies.push(ms(copyStart));
    rmSync(copy, { recursive: true, force: true });
  }
  const seedStart = process.hrtime.bigint();
  await snapshots.seed(`${session}fork`, { session_id: session, turn_id: `turn_${RUNS}` }, 1024 * MiB);
  const seedMs = ms(seedStart);
  const onDisk = du(join(root, 'snapshots', session));
  const f = (v: number) => v.toFixed(1);
  console.log(`per-turn workspace snapshot, loop workspace of ${FILES} MiB, 1 MiB rewritten per turn, ${RUNS} runs (keep ${retention.keep}):`);
  console.log(`  snapshot time:        p50 ${f(percentile(times, 50))} ms   p99 ${f(percentile(times, 99))} ms`);
  console.log(`  snapshot bytes added: p50 ${percentile(bytes, 50)}   p99 ${percentile(bytes, 99)}`);
  console.log(`  on disk for ${retention.keep} kept snapshots: ${(onDisk / MiB).toFixed(1)} MiB (${f(onDisk / (retention.keep * FILES * MiB) * 100)} % of ${retention.keep} full copies)`);
  console.log(`  raw full copy (cp -a): p50 ${f(percentile(copies, 50))} ms   p99 ${f(percentile(copies, 99))} ms   (snapshot/copy p50: ${f(percentile(times, 50) / percentile(copies, 50))}x)`);
  console.log(`  seeding a fork's workspace from a snapshot: ${f(seedMs)} ms`);
  console.log(`  load average: ${execFileSync('cat', ['/proc/loadavg'], { encoding: 'utf8' }).split(' ').slice(0, 3).join(' ')}`);
  await snapshots.removeSession(session);
  await workspaces.removeSession(session);
  await workspaces.removeSession(`${session}fork`);
}

main()
  .catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(() => rmSync(root, { recursive: true, force: true }));
