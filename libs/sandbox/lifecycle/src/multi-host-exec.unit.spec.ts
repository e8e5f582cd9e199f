import type { SandboxSpec } from '@berth/ports';
// eslint-disable-next-line @nx/enforce-module-boundaries -- the in-memory runtime lives in the testing library
import { InMemorySandboxRuntime } from '@berth/testing';
import { HostLostError, MultiHostRuntime } from './multi-host-runtime';

const spec: SandboxSpec = { name: 'berth-s-sesn_lost-g1', image: 'img', labels: { 'berth.managed': 'true' }, env: {}, network: 'none', user: '1000', workdir: '/workspace', memoryBytes: 1, nanoCpus: 1, pidsLimit: 1, readOnlyRoot: false, cmd: ['sleep'] };

async function until(what: string, probe: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('an exec on a sandbox host that is lost', () => {
  const unhandled: unknown[] = [];
  const record = (reason: unknown) => void unhandled.push(reason);
  beforeEach(() => process.on('unhandledRejection', record));
  afterEach(() => process.off('unhandledRejection', record));

  it('fails its lines and its exit with the host, and an exit nobody awaited is no unhandled rejection', async () => {
    let answering = true;
    // A harness that never ends by itself: only the host's loss ends its exec.
    const engine = new InMemorySandboxRuntime({ execScript: () => new Promise(() => undefined) });
    const runtime = new MultiHostRuntime({
      hosts: [{ name: 'a', runtime: engine, maxSandboxes: 4, ping: () => (answering ? Promise.resolve() : new Promise(() => undefined)) }],
      countedLabels: { 'berth.managed': 'true' },
      probeMs: 10,
      pingTimeoutMs: 10,
      missesBeforeLost: 1,
    });
    try {
      await runtime.ensureRunning(spec);
      const handle = await runtime.exec(spec.name, { cmd: ['harness'] });
      answering = false;
      await until('host a lost', async () => (await runtime.loads())[0]?.reachable === false);
      await expect(handle.lines[Symbol.asyncIterator]().next()).rejects.toBeInstanceOf(HostLostError);
      // Unhandled rejections are reported once the tasks queued with the loss have run.
      await new Promise((r) => setTimeout(r, 50));
      expect(unhandled).toEqual([]);
      await expect(handle.exit).rejects.toThrow('sandbox host a does not answer');
    } finally {
      runtime.close();
    }
  });
});
