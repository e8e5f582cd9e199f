import { FixedClock } from '@berth/core/testing';
import { DEFAULT_SANDBOX_CONFIG, type SandboxConfig, sessionSandboxName } from '@berth/sandbox-domain';
// eslint-disable-next-line @nx/enforce-module-boundaries -- the in-memory runtime fake lives in the testing library
import { InMemorySandboxRuntime, InMemoryWorkspaces, MemorySandboxClaims } from '@berth/testing';
import { SandboxProvisioner } from './sandbox-provisioner';
import { WarmPool } from './warm-pool';

const config = (size: number, ttlSeconds = 600): SandboxConfig => ({ ...DEFAULT_SANDBOX_CONFIG, image: 'berth/base:bookworm', warmPool: { size, ttlSeconds } });

function setup(size = 2) {
  const clock = new FixedClock(new Date('2026-01-01T00:00:00Z'));
  const runtime = new InMemorySandboxRuntime({ now: () => clock.now() });
  const claims = new MemorySandboxClaims();
  let slot = 0;
  const errors: unknown[] = [];
  const workspaces = new InMemoryWorkspaces();
  const pool = new WarmPool({ runtime, workspaces, claims, clock, nextSlot: () => `s${++slot}`, onError: (e) => errors.push(e) });
  pool.configure([{ environmentId: 'env_a', config: config(size) }]);
  return { clock, runtime, claims, pool, errors, workspaces, newPool: () => new WarmPool({ runtime, workspaces, claims, clock, nextSlot: () => `t${++slot}` }) };
}

describe('WarmPool', () => {
  it('fills each environment to its size and refills after a claim', async () => {
    const { pool, runtime } = setup(2);
    pool.refill();
    await pool.idle();
    expect(pool.readyCount('env_a')).toBe(2);
    const claimed = await pool.claim({ environmentId: 'env_a', sessionId: 'sesn_1', generation: 1 });
    expect(claimed).toMatchObject({ name: sessionSandboxName('sesn_1', 1), running: true });
    await pool.idle();
    expect(pool.readyCount('env_a')).toBe(2);
    expect(runtime.created).toBe(3);
  });

  it('hands one warm container to exactly one of many concurrent claimers', async () => {
    const { pool } = setup(1);
    pool.refill();
    await pool.idle();
    pool.configure([{ environmentId: 'env_a', config: config(0) }]);
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => pool.claim({ environmentId: 'env_a', sessionId: `sesn_${i}`, generation: 1 })),
    );
    expect(results.filter((r) => r !== null)).toHaveLength(1);
  });

  it('two managers sharing the claims never both win the same container', async () => {
    const { pool, runtime, claims, newPool } = setup(1);
    pool.refill();
    await pool.idle();
    const [warm] = await runtime.list({ 'berth.pool': 'env_a' });
    const other = newPool();
    other.configure([{ environmentId: 'env_a', config: config(1) }]);
    other.adopt([{ sandbox: warm, environmentId: 'env_a' }]);
    const [a, b] = await Promise.all([
      pool.claim({ environmentId: 'env_a', sessionId: 'sesn_a', generation: 1 }),
      other.claim({ environmentId: 'env_a', sessionId: 'sesn_b', generation: 1 }),
    ]);
    expect([a, b].filter((r) => r?.id === warm.id)).toHaveLength(1);
    expect(await claims.claimant(warm.id)).toBe(a?.id === warm.id ? 'sesn_a' : 'sesn_b');
  });

  it('claims the warm containers another manager started once its own list is empty (one shared pool)', async () => {
    const { pool, newPool, claims } = setup(1);
    pool.refill();
    await pool.idle();
    const other = newPool();
    other.configure([{ environmentId: 'env_a', config: config(1) }]);
    const got = await other.claim({ environmentId: 'env_a', sessionId: 'sesn_b', generation: 1 });
    expect(got).toMatchObject({ name: sessionSandboxName('sesn_b', 1) });
    expect(await claims.claimant(got!.id)).toBe('sesn_b');
    // The first manager still lists it, but its claim loses: it never hands it out again.
    expect((await pool.claim({ environmentId: 'env_a', sessionId: 'sesn_a', generation: 1 }))?.id).not.toBe(got!.id);
  });

  it('removes a warm container only after winning its claim: one another manager just claimed stays', async () => {
    const { pool, runtime, claims, clock } = setup(1);
    pool.refill();
    await pool.idle();
    const [warm] = await runtime.list({ 'berth.pool': 'env_a' });
    await claims.claim(warm!.id, 'sesn_elsewhere');
    clock.advance(601_000);
    await pool.sweep();
    await pool.idle();
    expect(await runtime.inspect(warm!.id)).toMatchObject({ running: true });
    expect(await pool.discardFound(warm!)).toBe(false);
    expect(await runtime.inspect(warm!.id)).toMatchObject({ running: true });
  });

  it('never offers a container past its TTL, and sweep removes it', async () => {
    const { pool, runtime, clock } = setup(1);
    pool.refill();
    await pool.idle();
    const [old] = await runtime.list({ 'berth.pool': 'env_a' });
    clock.advance(601_000);
    const claimed = await pool.claim({ environmentId: 'env_a', sessionId: 'sesn_1', generation: 1 });
    expect(claimed).toBeNull();
    await pool.idle();
    expect(await runtime.inspect(old.id)).toBeNull();
    expect(pool.readyCount('env_a')).toBe(1);
    clock.advance(601_000);
    await pool.sweep();
    await pool.idle();
    expect((await runtime.list({ 'berth.pool': 'env_a' })).map((i) => i.id)).not.toContain(old.id);
  });

  it('skips a warm container that died before the claim', async () => {
    const { pool, runtime } = setup(2);
    pool.refill();
    await pool.idle();
    const [first] = await runtime.list({ 'berth.pool': 'env_a' });
    runtime.kill(first.id);
    const claimed = await pool.claim({ environmentId: 'env_a', sessionId: 'sesn_1', generation: 1 });
    expect(claimed?.running).toBe(true);
    expect(claimed?.id).not.toBe(first.id);
  });
});

describe('SandboxProvisioner', () => {
  it('prefers the session container that already exists, then a warm one, then a cold start', async () => {
    const { pool, runtime, workspaces } = setup(1);
    const provisioner = new SandboxProvisioner({ runtime, workspaces, pool });
    pool.refill();
    await pool.idle();
    const input = { sessionId: 'sesn_1', generation: 1, environmentId: 'env_a', config: config(1) };
    const first = await provisioner.acquire(input);
    expect(first.source).toBe('warm');
    const retried = await provisioner.acquire(input);
    expect(retried).toMatchObject({ source: 'existing', sandbox: { id: first.sandbox.id } });
    await pool.idle();
    pool.configure([]);
    const cold = await provisioner.acquire({ ...input, sessionId: 'sesn_2' });
    expect(cold).toMatchObject({ source: 'cold', sandbox: { name: sessionSandboxName('sesn_2', 1), running: true } });
    await provisioner.release(cold.sandbox.name);
    await provisioner.release(cold.sandbox.name);
    expect(await runtime.inspect(cold.sandbox.name)).toBeNull();
  });
});

describe('SandboxProvisioner and session workspaces', () => {
  it('lets a new session adopt the spare workspace of the warm container it claims', async () => {
    const { pool, runtime, workspaces } = setup(1);
    const provisioner = new SandboxProvisioner({ runtime, workspaces, pool });
    pool.refill();
    await pool.idle();
    const [spare] = (await workspaces.spares()).map((s) => s.id);
    const warm = await provisioner.acquire({ sessionId: 'sesn_1', generation: 1, environmentId: 'env_a', config: config(1) });
    expect(warm).toMatchObject({ source: 'warm', workspaceId: spare });
    expect((await workspaces.ofSession('sesn_1'))?.id).toBe(spare);
    expect(workspaces.limits.get(spare)).toBe(config(1).workspaceBytes);
  });

  it('starts a rebuild cold with the workspace the session already owns, leaving the warm container for others', async () => {
    const { pool, runtime, workspaces } = setup(1);
    const provisioner = new SandboxProvisioner({ runtime, workspaces, pool });
    const first = await provisioner.acquire({ sessionId: 'sesn_1', generation: 1, environmentId: 'env_a', config: config(0) });
    expect(first).toMatchObject({ source: 'cold', workspaceId: 'wss-sesn_1' });
    pool.refill();
    await pool.idle();
    const rebuilt = await provisioner.acquire({ sessionId: 'sesn_1', generation: 2, environmentId: 'env_a', config: config(1) });
    expect(rebuilt).toMatchObject({ source: 'cold', workspaceId: 'wss-sesn_1' });
    expect(rebuilt.sandbox.labels['berth.workspace']).toBe('wss-sesn_1');
    expect(pool.readyCount('env_a')).toBe(1);
  });

  it('removes the spare workspace with a warm container nobody claimed', async () => {
    const { pool, workspaces } = setup(2);
    pool.refill();
    await pool.idle();
    expect(await workspaces.spares()).toHaveLength(2);
    pool.configure([]);
    await pool.sweep();
    expect(await workspaces.spares()).toEqual([]);
    expect(workspaces.existing()).toEqual([]);
  });
});

describe('WarmPool after a config change', () => {
  it('removes warm containers made for the old config and never hands them out', async () => {
    const { pool, runtime } = setup(2);
    pool.refill();
    await pool.idle();
    const old = (await runtime.list({ 'berth.pool': 'env_a' })).map((i) => i.id);
    pool.configure([{ environmentId: 'env_a', config: { ...config(2), image: 'berth/harness:v2' } }]);
    // The old ones are gone at once: this claim finds nothing fit (the caller starts cold).
    expect(await pool.claim({ environmentId: 'env_a', sessionId: 'sesn_1', generation: 1 })).toBeNull();
    await pool.idle();
    const fresh = await pool.claim({ environmentId: 'env_a', sessionId: 'sesn_2', generation: 1 });
    expect(fresh).not.toBeNull();
    expect(old).not.toContain(fresh?.id);
    await pool.idle();
    const left = await runtime.list({ 'berth.pool': 'env_a' });
    expect(left.filter((i) => old.includes(i.id))).toEqual([]);
    expect(pool.readyCount('env_a')).toBe(2);
  });
});
