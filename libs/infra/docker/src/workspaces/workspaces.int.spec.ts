import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SandboxSpec, SessionWorkspaces, Workspace } from '@berth/ports';
// eslint-disable-next-line @nx/enforce-module-boundaries -- the shared engine fixture lives in the testing library
import { ensureDockerTestEngine } from '@berth/testing';
import { DockerSandboxRuntime } from '../docker-sandbox-runtime';
import { detectWorkspaceKind } from './detect-workspaces';
import { sessionLayoutArchive } from './layout';
import { LoopWorkspaces } from './loop-workspaces';
import { VolumeWorkspaces } from './volume-workspaces';

jest.setTimeout(120_000);

const engine = ensureDockerTestEngine();
const runtime = new DockerSandboxRuntime({ dockerHost: engine.dockerHost });
const run = `w${randomBytes(4).toString('hex')}`;
const TEST_LABEL = 'berth.test-run';
const MiB = 1024 * 1024;
let n = 0;

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
      const spare = await workspaces.createSpare(64 * MiB);
      expect(await workspaces.spares()).toContain(spare.id);
      const s1 = `sesn_${run}${name}b1`;
      const s2 = `sesn_${run}${name}b2`;
      expect(await workspaces.adopt(s1, spare.id)).toBe(true);
      expect(await workspaces.adopt(s1, spare.id)).toBe(true);
      expect((await workspaces.ofSession(s1))?.id).toBe(spare.id);
      expect(await workspaces.spares()).not.toContain(spare.id);
      const other = await workspaces.createSpare(64 * MiB);
      expect(await workspaces.adopt(s1, other.id)).toBe(false);
      expect((await workspaces.ofSession(s1))?.id).toBe(spare.id);
      expect(await workspaces.adopt(s2, other.id)).toBe(true);
      await workspaces.removeSession(s1);
      await workspaces.removeSession(s2);
      const gone = await workspaces.createSpare(64 * MiB);
      await workspaces.removeSpare(gone.id);
      expect(await workspaces.spares()).not.toContain(gone.id);
    });
  });
}

describeWorkspaces('volume', () => new VolumeWorkspaces(runtime.docker, { [TEST_LABEL]: run }));

describe('loop workspaces', () => {
  const root = mkdtempSync(join(tmpdir(), 'berth-ws-'));
  let detected: { kind: string; reason: string } = { kind: 'volume', reason: 'not detected yet' };
  beforeAll(async () => {
    detected = await detectWorkspaceKind(runtime.docker);
    if (detected.kind !== 'loop') console.log(`skipped: loop workspaces need root on the engine host (${detected.reason})`);
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  describeWorkspaces('loop', () => new LoopWorkspaces(root));

  it('bound a workspace by its size: the agent gets ENOSPC, the host nothing', async () => {
    if (detected.kind !== 'loop') return;
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
});
