import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, lstatSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SandboxSpec, SessionWorkspaces, Workspace } from '@berth/ports';
// eslint-disable-next-line @nx/enforce-module-boundaries -- the shared engine fixture lives in the testing library
import { ensureDockerTestEngine } from '@berth/testing';
import { DockerSandboxRuntime } from '../docker-sandbox-runtime';
import { sessionLayoutArchive } from './layout';
import { LoopWorkspaceSnapshots } from './loop-snapshots';
import { LoopWorkspaces } from './loop-workspaces';
import { VolumeWorkspaces } from './volume-workspaces';

jest.setTimeout(120_000);

const engine = ensureDockerTestEngine();
const runtime = new DockerSandboxRuntime({ dockerHost: engine.dockerHost });
const run = `w${randomBytes(4).toString('hex')}`;
const TEST_LABEL = 'berth.test-run';
const MiB = 1024 * 1024;
let n = 0;

/**
 * Whether this host can run loop workspaces, by the sandbox-manager's own detection. Jest cannot
 * skip a test from a hook, so the (asynchronous) detection runs in a child process while the tests
 * are declared: where loop workspaces cannot run, their tests show as skipped, not as passed.
 */
const detected = JSON.parse(
  execFileSync(
    process.execPath,
    [
      '-r',
      '@swc-node/register',
      '-e',
      `const { DockerSandboxRuntime } = require(${JSON.stringify(join(__dirname, '..', 'docker-sandbox-runtime'))});
       require(${JSON.stringify(join(__dirname, 'detect-workspaces'))})
         .detectWorkspaceKind(new DockerSandboxRuntime({ dockerHost: ${JSON.stringify(engine.dockerHost)} }).docker)
         .then((r) => process.stdout.write(JSON.stringify(r)));`,
    ],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
  ),
) as { kind: 'loop' | 'volume'; reason: string };
if (detected.kind !== 'loop') console.log(`NOT RUN: loop workspaces and their snapshots (${detected.reason})`);

const sandbox = async (workspace: Workspace): Promise<string> => {
  const spec: SandboxSpec = {
    name: `berth-s-${run}x${++n}-g1`,
    image: engine.baseImage,
    labels: { 'berth.managed': 'true', [TEST_LABEL]: run },
    env: { HOME: '/tmp' },
    network: 'none',
    user: '1000:1000',
    workdir: '/workspace',
    memoryBytes: 128 * MiB,
    nanoCpus: 500_000_000,
    pidsLimit: 64,
    readOnlyRoot: false,
    cmd: ['/bin/sh', '-c', "trap 'exit 0' TERM INT; sleep infinity & wait"],
    mounts: workspace.mounts,
  };
  const name = (await runtime.ensureRunning(spec)).name;
  await runtime.putArchive(name, '/mnt/session', sessionLayoutArchive());
  return name;
};

async function sh(container: string, script: string): Promise<{ out: string; code: number }> {
  const handle = await runtime.exec(container, { cmd: ['/bin/sh', '-c', script], stdin: '' });
  const lines: string[] = [];
  for await (const line of handle.lines) lines.push(line);
  return { out: lines.join('\n'), code: await handle.exit };
}

afterAll(async () => {
  for (const info of await runtime.list({ [TEST_LABEL]: run })) await runtime.remove(info.id);
  // A failed test leaves its volumes: every volume of this run goes.
  const { Volumes } = await runtime.docker.listVolumes({ filters: JSON.stringify({ label: [`${TEST_LABEL}=${run}`] }) });
  for (const volume of Volumes ?? []) await runtime.docker.getVolume(volume.Name).remove();
});

function describeWorkspaces(name: string, make: () => SessionWorkspaces) {
  describe(`${name} workspaces on the real engine`, () => {
    let workspaces: SessionWorkspaces;
    beforeAll(() => {
      workspaces = make();
    });

    it('keep /workspace and /mnt/session across sandboxes, writable by the sandbox user', async () => {
      const session = `sesn_${run}${name}a`;
      const first = await sandbox(await workspaces.forSession(session, 64 * MiB));
      expect(await sh(first, 'echo kept > /workspace/a.txt && echo out > /mnt/session/outputs/b.txt && echo up > /mnt/session/uploads/c && id -u')).toEqual({ out: '1000', code: 0 });
      await runtime.remove(first);
      const again = await workspaces.forSession(session, 64 * MiB);
      expect((await workspaces.ofSession(session))?.id).toBe(again.id);
      const second = await sandbox(again);
      expect(await sh(second, 'cat /workspace/a.txt /mnt/session/outputs/b.txt')).toEqual({ out: 'kept\nout', code: 0 });
      await runtime.remove(second);
      await workspaces.removeSession(session);
      expect(await workspaces.ofSession(session)).toBeNull();
      const fresh = await sandbox(await workspaces.forSession(session, 64 * MiB));
      expect((await sh(fresh, 'ls -A /workspace')).out).toBe('');
      await runtime.remove(fresh);
      await workspaces.removeSession(session);
    });

    it('let exactly one session adopt a spare; a session that owns one keeps it', async () => {
      const before = Date.now();
      const spare = await workspaces.createSpare(64 * MiB);
      const listed = (await workspaces.spares()).find((s) => s.id === spare.id);
      // When it was made, to the second (Docker's CreatedAt has no finer grain).
      expect(Date.parse(listed?.madeAt ?? '')).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
      expect(Date.parse(listed?.madeAt ?? '')).toBeLessThanOrEqual(Date.now());
      const s1 = `sesn_${run}${name}b1`;
      const s2 = `sesn_${run}${name}b2`;
      expect(await workspaces.adopt(s1, spare.id)).toBe(true);
      expect(await workspaces.adopt(s1, spare.id)).toBe(true);
      expect((await workspaces.ofSession(s1))?.id).toBe(spare.id);
      expect((await workspaces.spares()).map((s) => s.id)).not.toContain(spare.id);
      const other = await workspaces.createSpare(64 * MiB);
      expect(await workspaces.adopt(s1, other.id)).toBe(false);
      expect((await workspaces.ofSession(s1))?.id).toBe(spare.id);
      expect(await workspaces.adopt(s2, other.id)).toBe(true);
      await workspaces.removeSession(s1);
      await workspaces.removeSession(s2);
      const gone = await workspaces.createSpare(64 * MiB);
      await workspaces.removeSpare(gone.id);
      expect((await workspaces.spares()).map((s) => s.id)).not.toContain(gone.id);
    });
  });
}

describeWorkspaces('volume', () => new VolumeWorkspaces(runtime.docker, { [TEST_LABEL]: run }));

(detected.kind === 'loop' ? describe : describe.skip)('loop workspaces', () => {
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'berth-ws-'));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  describeWorkspaces('loop', () => new LoopWorkspaces(root));

  it('bound a workspace by its size: the agent gets ENOSPC, the host nothing', async () => {
    const workspaces = new LoopWorkspaces(root);
    const session = `sesn_${run}limit`;
    const box = await sandbox(await workspaces.forSession(session, 32 * MiB));
    const filled = await sh(box, 'dd if=/dev/zero of=/workspace/fill bs=1M count=64 2>&1; echo "exit=$?"; df -k /workspace | tail -1');
    expect(filled.out).toMatch(/No space left on device/);
    expect(filled.out).toMatch(/exit=1/);
    const size = Number(filled.out.trim().split('\n').pop()?.split(/\s+/)[1]);
    expect(size * 1024).toBeLessThanOrEqual(32 * MiB);
    await runtime.remove(box);
    await workspaces.removeSession(session);
  });

  describe('per-turn snapshots (LoopWorkspaceSnapshots)', () => {
    const keepAll = { keep: 10, maxBytes: 1024 * MiB };
    const snapshotDir = (session: string, turn: string) => join(root, 'snapshots', session, turn);

    it('link what a turn left unchanged, copy what it changed, and seed a fork with the tree as it was at that turn', async () => {
        const workspaces = new LoopWorkspaces(root);
      const snapshots = new LoopWorkspaceSnapshots(root, workspaces);
      const source = `sesn_${run}snap`;
      const box = await sandbox(await workspaces.forSession(source, 64 * MiB));
      await sh(box, 'head -c 2097152 /dev/urandom > /workspace/big.bin && echo one > /workspace/notes.txt && mkdir -p /workspace/src && echo out > /mnt/session/outputs/r.txt');
      const first = await snapshots.take(source, 'turn_1', keepAll);
      expect(first).toEqual({ bytes: 2 * MiB + 4 + 4, files: 3, dropped_turn_ids: [] });
      // A symlink the agent plants is kept as a link, never followed into the host.
      expect((await sh(box, 'echo two > /workspace/notes.txt && ln -s /etc/shadow /workspace/src/escape && echo $?')).out).toBe('0');
      const second = await snapshots.take(source, 'turn_2', keepAll);
      expect(second).toEqual({ bytes: 4, files: 3, dropped_turn_ids: [] });
      expect(lstatSync(join(snapshotDir(source, 'turn_2'), 'workspace', 'big.bin')).nlink).toBe(2);
      expect(lstatSync(join(snapshotDir(source, 'turn_2'), 'workspace', 'src', 'escape')).isSymbolicLink()).toBe(true);
      await sh(box, 'echo three > /workspace/notes.txt && rm /workspace/big.bin');
      await snapshots.take(source, 'turn_3', keepAll);

      const fork = `sesn_${run}fork`;
      await snapshots.seed(fork, { session_id: source, turn_id: 'turn_2' }, 64 * MiB);
      const forkBox = await sandbox((await workspaces.ofSession(fork)) as Workspace);
      const seen = await sh(forkBox, 'cat /workspace/notes.txt; ls /workspace; readlink /workspace/src/escape; stat -c %u /workspace/notes.txt; cat /mnt/session/outputs/r.txt');
      expect(seen).toEqual({ out: 'two\nbig.bin\nnotes.txt\nsrc\n/etc/shadow\n1000\nout', code: 0 });
      // Seeding again (a rebuilt sandbox of the fork) keeps the fork's own work.
      await sh(forkBox, 'echo mine > /workspace/notes.txt');
      await snapshots.seed(fork, { session_id: source, turn_id: 'turn_2' }, 64 * MiB);
      expect((await sh(forkBox, 'cat /workspace/notes.txt')).out).toBe('mine');
      expect((await sh(box, 'cat /workspace/notes.txt')).out).toBe('three');

      await runtime.remove(box);
      await runtime.remove(forkBox);
      await snapshots.removeSession(source);
      expect(existsSync(join(root, 'snapshots', source))).toBe(false);
      await expect(snapshots.seed(`sesn_${run}late`, { session_id: source, turn_id: 'turn_2' }, 64 * MiB)).rejects.toThrow(/snapshot .* is gone/);
      for (const session of [source, fork, `sesn_${run}late`]) await workspaces.removeSession(session);
    });

    it('keep at most `keep` snapshots and `maxBytes` together, dropping the oldest and naming it; keep 0 takes none', async () => {
        const workspaces = new LoopWorkspaces(root);
      const snapshots = new LoopWorkspaceSnapshots(root, workspaces);
      const session = `sesn_${run}keep`;
      const box = await sandbox(await workspaces.forSession(session, 64 * MiB));
      const turn = async (n: number, retention: { keep: number; maxBytes: number }, file = `f${n}`) => {
        await sh(box, `head -c 1048576 /dev/urandom > /workspace/${file}.bin`);
        return snapshots.take(session, `turn_${n}`, retention);
      };
      expect((await turn(1, { keep: 2, maxBytes: 64 * MiB }))?.dropped_turn_ids).toEqual([]);
      expect((await turn(2, { keep: 2, maxBytes: 64 * MiB }))?.dropped_turn_ids).toEqual([]);
      expect((await turn(3, { keep: 2, maxBytes: 64 * MiB }))?.dropped_turn_ids).toEqual(['turn_1']);
      expect(existsSync(snapshotDir(session, 'turn_1'))).toBe(false);
      // Bytes count once however many snapshots link them: f1-f3 are 3 MiB on disk. Rewriting f3 adds 1 MiB;
      // under 3.5 MiB that drops turn_2 (frees nothing: its files are linked by later turns) and turn_3 (frees the old f3).
      expect((await turn(4, { keep: 10, maxBytes: 3.5 * MiB }, 'f3'))?.dropped_turn_ids).toEqual(['turn_2', 'turn_3']);
      expect(existsSync(snapshotDir(session, 'turn_4'))).toBe(true);
      expect((await turn(6, { keep: 10, maxBytes: 3.5 * MiB }, 'f3'))?.dropped_turn_ids).toEqual(['turn_4']);
      expect(await turn(5, { keep: 0, maxBytes: 64 * MiB })).toBeNull();
      expect(existsSync(snapshotDir(session, 'turn_5'))).toBe(false);
      expect(await snapshots.take(`sesn_${run}none`, 'turn_1', keepAll)).toBeNull();
      await runtime.remove(box);
      await snapshots.removeSession(session);
      await workspaces.removeSession(session);
    });
  });
});
