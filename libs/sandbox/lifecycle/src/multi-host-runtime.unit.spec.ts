import { systemClock } from '@berth/core';
import type { Lease, Leases, SandboxInfo, SandboxSpec } from '@berth/ports';
// eslint-disable-next-line @nx/enforce-module-boundaries -- the in-memory runtime and leases live in the testing library
import { InMemorySandboxRuntime, MemoryLeases } from '@berth/testing';
import { LeaseLock } from './lease-lock';
import { MultiHostRuntime } from './multi-host-runtime';

const counted = { 'berth.managed': 'true' };
const spec = (name: string): SandboxSpec => ({
  name,
  image: 'berth/base:bookworm',
  labels: counted,
  env: {},
  network: 'none',
  user: '1000:1000',
  workdir: '/workspace',
  memoryBytes: 128 * 1024 * 1024,
  nanoCpus: 500_000_000,
  pidsLimit: 64,
  readOnlyRoot: false,
  cmd: ['sleep', 'infinity'],
});

/** An engine whose creates wait until the test lets them through (a busy engine), and whose starts may fail. */
class SlowEngine extends InMemorySandboxRuntime {
  readonly waiting: (() => void)[] = [];
  open = false;
  failStarts = false;

  override async create(s: SandboxSpec): Promise<void> {
    if (!this.open) await new Promise<void>((resolve) => this.waiting.push(resolve));
    await super.create(s);
  }

  override async start(nameOrId: string): Promise<SandboxInfo> {
    if (this.failStarts) throw new Error('the engine could not start it');
    return super.start(nameOrId);
  }

  letThrough(): void {
    this.open = true;
    for (const resolve of this.waiting.splice(0)) resolve();
  }
}

/** The store's leases, counting the acquisitions refused because another holder has the lease. */
class WatchedLeases implements Leases {
  private readonly inner = new MemoryLeases();
  refused = 0;

  async acquire(name: string, holder: string, now: Date, ttlMs: number): Promise<Lease | null> {
    const lease = await this.inner.acquire(name, holder, now, ttlMs);
    if (lease === null) this.refused += 1;
    return lease;
  }

  get(name: string): Promise<Lease | null> {
    return this.inner.get(name);
  }

  release(name: string, holder: string): Promise<void> {
    return this.inner.release(name, holder);
  }
}

async function until(what: string, condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('MultiHostRuntime placement across managers', () => {
  const opened: MultiHostRuntime[] = [];
  const manager = (engine: SlowEngine, leases: Leases, holder: string, maxSandboxes = 1) => {
    const runtime = new MultiHostRuntime({
      hosts: [{ name: 'a', runtime: engine, maxSandboxes, ping: async () => true }],
      countedLabels: counted,
      placementLock: new LeaseLock(leases, holder, systemClock),
    });
    opened.push(runtime);
    return runtime;
  };
  afterEach(() => {
    for (const runtime of opened.splice(0)) runtime.close();
  });

  it('two managers placing at once on a host with one place: the second counts the container the first created, and is refused', async () => {
    const engine = new SlowEngine();
    const leases = new WatchedLeases();
    const [x, y] = [manager(engine, leases, 'manager-x'), manager(engine, leases, 'manager-y')];
    const placing = [x.ensureRunning(spec('berth-s-one-g1')), y.ensureRunning(spec('berth-s-two-g1'))];
    // x creates on the busy engine holding the placement lease; y waits for the lease (or, with none, creates too).
    await until('both placements under way', () => engine.waiting.length + (leases.refused > 0 ? 1 : 0) >= 2);
    engine.letThrough();
    const [first, second] = await Promise.allSettled(placing);
    expect(first).toMatchObject({ status: 'fulfilled', value: { name: 'berth-s-one-g1', running: true, host: 'a' } });
    expect(second).toMatchObject({ status: 'rejected', reason: new Error('every sandbox host is at its limit (a 1/1)') });
    expect((await engine.list(counted)).map((c) => c.name)).toEqual(['berth-s-one-g1']);
    expect(await leases.get('sandbox-placement:a')).toBeNull();
  });

  it('a manager places the sandboxes that waited meanwhile together: one count, their creates at once', async () => {
    const engine = new SlowEngine();
    const runtime = manager(engine, new MemoryLeases(), 'manager-x', 3);
    const first = runtime.ensureRunning(spec('berth-s-one-g1'));
    await until('the first create', () => engine.waiting.length === 1);
    const settled = Promise.allSettled([first, ...['two', 'three', 'four'].map((n) => runtime.ensureRunning(spec(`berth-s-${n}-g1`)))]);
    engine.waiting.shift()?.();
    // The three that waited are one round: the two that fit are created at once, the last is refused.
    await until('two creates at once', () => engine.waiting.length === 2);
    engine.letThrough();
    const results = await settled;
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'rejected']);
    expect(results[3]).toMatchObject({ reason: new Error('every sandbox host is at its limit (a 3/3)') });
    expect(await engine.list(counted)).toHaveLength(3);
  });

  it('a created container that does not start is removed: it would hold a place', async () => {
    const engine = new SlowEngine();
    engine.letThrough();
    engine.failStarts = true;
    const runtime = manager(engine, new MemoryLeases(), 'manager-x');
    await expect(runtime.ensureRunning(spec('berth-s-one-g1'))).rejects.toThrow('the engine could not start it');
    expect(await engine.list(counted)).toEqual([]);
    engine.failStarts = false;
    expect(await runtime.ensureRunning(spec('berth-s-two-g1'))).toMatchObject({ running: true, host: 'a' });
  });
});
