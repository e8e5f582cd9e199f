import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import type { SandboxRuntimeEvent, SandboxSpec } from '@berth/ports';
// eslint-disable-next-line @nx/enforce-module-boundaries -- the shared engine fixture lives in the testing library
import { describeSandboxRuntimeContract, ensureDockerTestEngine } from '@berth/testing';
import { DockerSandboxRuntime } from './docker-sandbox-runtime';

jest.setTimeout(60_000);

const engine = ensureDockerTestEngine();
const runtime = new DockerSandboxRuntime({ dockerHost: engine.dockerHost });
const run = `t${randomBytes(4).toString('hex')}`;
const TEST_LABEL = 'berth.test-run';

const spec = (suffix: string, overrides: Partial<SandboxSpec> = {}): SandboxSpec => ({
  name: `berth-s-${run}${suffix}-g1`,
  image: engine.baseImage,
  labels: { 'berth.managed': 'true', 'berth.session': `${run}${suffix}`, 'berth.generation': '1', 'berth.environment': 'env_test', [TEST_LABEL]: run },
  env: { HOME: '/tmp' },
  network: 'none',
  user: '1000:1000',
  workdir: '/tmp',
  memoryBytes: 128 * 1024 * 1024,
  nanoCpus: 500_000_000,
  pidsLimit: 64,
  readOnlyRoot: false,
  cmd: ['/bin/sh', '-c', "trap 'exit 0' TERM INT; sleep infinity & wait"],
  ...overrides,
});

const docker = (...args: string[]) => execFileSync('docker', args, { encoding: 'utf8', env: { ...process.env, DOCKER_HOST: engine.dockerHost } });

async function collect(lines: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const line of lines) out.push(line);
  return out;
}

afterAll(async () => {
  for (const info of await runtime.list({ [TEST_LABEL]: run })) await runtime.remove(info.id);
});

describeSandboxRuntimeContract('Docker, the real engine', async () => ({
  runtime: new DockerSandboxRuntime({ dockerHost: engine.dockerHost }),
  image: engine.baseImage,
  kill: async (sandbox) => void docker('kill', sandbox.id),
  dispose: async () => undefined,
}));

describe('DockerSandboxRuntime against the real engine', () => {
  it('runs hardened: non-root, all capabilities dropped, no-new-privileges, limits, no engine socket', async () => {
    const info = await runtime.ensureRunning(spec('h'));
    const [inspected] = JSON.parse(docker('inspect', info.id));
    expect(inspected.Config.User).toBe('1000:1000');
    expect(inspected.HostConfig.CapDrop).toEqual(['ALL']);
    expect(inspected.HostConfig.CapAdd ?? []).toEqual([]);
    expect(inspected.HostConfig.SecurityOpt).toContain('no-new-privileges');
    expect(inspected.HostConfig.Privileged).toBe(false);
    expect(inspected.HostConfig.PidsLimit).toBe(64);
    expect(inspected.HostConfig.Memory).toBe(128 * 1024 * 1024);
    expect(inspected.HostConfig.NanoCpus).toBe(500_000_000);
    expect(inspected.HostConfig.NetworkMode).toBe('none');
    const mounts = JSON.stringify([inspected.Mounts, inspected.HostConfig.Binds ?? []]);
    expect(mounts).not.toMatch(/docker\.sock/);
    // And from inside: the process really is uid 1000 with no effective capabilities.
    const id = await collect((await runtime.exec(info.id, { cmd: ['/bin/sh', '-c', 'id -u; grep CapEff /proc/self/status'] })).lines);
    expect(id[0]).toBe('1000');
    expect(id[1]).toMatch(/CapEff:\s+0+$/);
  });

  it('refuses a spec that binds the Docker socket or runs as root, before touching the engine', async () => {
    await expect(runtime.ensureRunning(spec('x', { mounts: [{ type: 'bind', source: '/run/berth-docker.sock', target: '/var/run/docker.sock' }] }))).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
    });
    await expect(runtime.ensureRunning(spec('y', { user: 'root' }))).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    expect(await runtime.inspect(spec('x').name)).toBeNull();
  });

  it('a missing image is a clear, coded error (nothing is pulled)', async () => {
    await expect(runtime.ensureRunning(spec('m', { image: 'berth/not-built:nope' }))).rejects.toMatchObject({
      code: 'SANDBOX_IMAGE_MISSING',
      message: expect.stringContaining('berth/not-built:nope'),
    });
  });

  it('read-only root keeps /workspace, home and /tmp writable', async () => {
    const info = await runtime.ensureRunning(spec('ro', { readOnlyRoot: true, env: { HOME: '/home/agent' }, workdir: '/workspace' }));
    const handle = await runtime.exec(info.id, { cmd: ['/bin/sh', '-c', 'touch /workspace/a /tmp/b /home/agent/c && echo ok; touch /etc/x 2>/dev/null || echo denied'] });
    expect(await collect(handle.lines)).toEqual(['ok', 'denied']);
    await runtime.writeFile(info.id, '/workspace/notes.txt', 'kept');
    expect((await runtime.readFile(info.id, '/workspace/notes.txt'))?.toString()).toBe('kept');
  });

  it('ensureRunning restarts a stopped container with the same name instead of failing', async () => {
    const first = await runtime.ensureRunning(spec('r'));
    await runtime.stop(first.id, 1);
    const again = await runtime.ensureRunning(spec('r'));
    expect(again).toMatchObject({ id: first.id, running: true });
  });

  it('create makes a stopped container never started, kept by a second create; start runs it', async () => {
    await runtime.create(spec('c'));
    const created = await runtime.inspect(spec('c').name);
    expect(created).toMatchObject({ running: false, startedAt: null });
    await runtime.create(spec('c'));
    expect(await runtime.list({ [TEST_LABEL]: run, 'berth.session': `${run}c` })).toEqual([created]);
    const started = await runtime.start(spec('c').name);
    expect(started).toMatchObject({ id: created?.id, running: true, startedAt: expect.any(String) });
  });

  it('docker kill → the events iterator yields die within seconds (pushed, not polled)', async () => {
    const info = await runtime.ensureRunning(spec('k'));
    const abort = new AbortController();
    const events: SandboxRuntimeEvent[] = [];
    const died = (async () => {
      for await (const event of runtime.events(abort.signal)) {
        events.push(event);
        if (event.kind === 'die' && event.containerId === info.id) return Date.now();
      }
      return null;
    })();
    // The subscription is live once the engine answers an unrelated event: poll for that.
    await waitFor(async () => {
      const probe = await runtime.ensureRunning(spec(`p${events.length}`));
      await runtime.remove(probe.id);
      return events.some((e) => e.name === probe.name);
    });
    const killedAt = Date.now();
    docker('kill', info.id);
    const diedAt = await died;
    abort.abort();
    expect(diedAt).not.toBeNull();
    // Pushed by the engine's event stream, not found by a later sweep; the bound leaves room for the
    // docker CLI's own start on a loaded 2-core machine (1.4–1.6 s seen there), not for a poll.
    expect((diedAt as number) - killedAt).toBeLessThan(5000);
    const die = events.find((e) => e.kind === 'die' && e.containerId === info.id);
    expect(die).toMatchObject({ name: info.name, exitCode: 137, labels: expect.objectContaining({ 'berth.session': `${run}k`, 'berth.generation': '1' }) });
  });

});

describe('egress directories on the real engine', () => {
  const root = mkdtempSync('/tmp/bgd-');
  const egressRuntime = new DockerSandboxRuntime({ dockerHost: engine.dockerHost, egressRoot: root });
  const withEgress = (suffix: string, relayPort: number | null = 3128): SandboxSpec => spec(suffix, { egress: { mountAt: '/run/berth', relayPort } });
  const dirOf = async (name: string) => (await egressRuntime.inspect(name))?.labels['berth.egress-dir'] as string;
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it("mounts the sandbox's own directory read-only: the socket is there, nothing can be written (connecting through it: sandbox-egress.e2e)", async () => {
    const info = await egressRuntime.ensureRunning(withEgress('e1'));
    const id = await dirOf(info.name);
    expect(readFileSync(join(root, id, 'name'), 'utf8')).toBe(info.name);
    expect(info.egressRelayPort).toBe(3128);
    const socket = join(root, id, 'socket', 'egress.sock');
    const server: Server = createServer((c) => c.end('reached\n'));
    await new Promise<void>((resolve) => server.listen(socket, () => resolve()));
    execFileSync('chmod', ['666', socket]);
    try {
      const probe = await collect(
        (await egressRuntime.exec(info.name, { cmd: ['/bin/sh', '-c', 'ls /run/berth; touch /run/berth/x 2>&1 || echo read-only; echo "$BERTH_EGRESS_RELAY_PORT"'], stdin: '' })).lines,
      );
      expect(probe).toEqual(['egress.sock', expect.stringContaining('Read-only file system'), 'read-only', '3128']);
      const [inspected] = JSON.parse(docker('inspect', info.id));
      expect(inspected.HostConfig.Mounts).toEqual([{ Type: 'bind', Source: join(root, id, 'socket'), Target: '/run/berth', ReadOnly: true }]);
      expect(inspected.HostConfig.NetworkMode).toBe('none');
    } finally {
      server.close();
    }
  });

  it('follows a rename (a warm claim) in the name file, and goes with the container', async () => {
    const info = await egressRuntime.ensureRunning(withEgress('e2'));
    const id = await dirOf(info.name);
    await egressRuntime.relabel(info.id, `berth-s-${run}e3-g1`);
    expect(readFileSync(join(root, id, 'name'), 'utf8')).toBe(`berth-s-${run}e3-g1`);
    await egressRuntime.remove(info.id);
    expect(existsSync(join(root, id))).toBe(false);
  });

  it('picks a free host port for a relay that asks for one (host sandboxes)', async () => {
    const info = await egressRuntime.ensureRunning(withEgress('e4', null));
    expect(info.egressRelayPort).toEqual(expect.any(Number));
    expect(info.egressRelayPort).not.toBe(3128);
  });

  it('prunes the directories of containers that are gone, and refuses a spec binding into the root', async () => {
    const info = await egressRuntime.ensureRunning(withEgress('e5'));
    const id = await dirOf(info.name);
    await runtime.remove(info.id);
    expect(existsSync(join(root, id))).toBe(true);
    expect(await egressRuntime.pruneEgressDirectories()).toBeGreaterThanOrEqual(1);
    expect(existsSync(join(root, id))).toBe(false);
    await expect(egressRuntime.ensureRunning(spec('e6', { mounts: [{ type: 'bind', source: join(root, id), target: '/mnt' }] }))).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
  });

  it('refuses a spec with an egress when it has no egress root', async () => {
    await expect(runtime.ensureRunning(withEgress('e7'))).rejects.toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'egress' } });
  });
});

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}
