import { poolSandboxLabels, poolSandboxName, sessionSandboxLabels, sessionSandboxName } from './naming';
import { DEFAULT_SANDBOX_CONFIG } from './sandbox-config';
import { poolSandboxSpec, sandboxConfigFingerprint } from './sandbox-spec';
import { isWarmExpired, type LiveSandbox, orphanSpares, planStartup, refillCount, SPARE_WORKSPACE_GRACE_MS } from './warm-pool-policy';

const now = new Date('2026-01-01T12:00:00Z');
const minutesAgo = (m: number) => new Date(now.getTime() - m * 60_000).toISOString();

const sessionBox = (sessionId: string, generation: number, running = true): LiveSandbox => ({
  id: `id-${sessionId}-${generation}`,
  name: '/' + sessionSandboxName(sessionId, generation),
  labels: sessionSandboxLabels(sessionId, generation, 'env_a'),
  running,
  startedAt: minutesAgo(5),
});
const poolBox = (env: string, slot: string, startedMinutesAgo: number, running = true): LiveSandbox => ({
  id: `id-${env}-${slot}`,
  name: poolSandboxName(env, slot),
  labels: poolSandboxLabels(env),
  running,
  startedAt: minutesAgo(startedMinutesAgo),
});

describe('warm pool policy', () => {
  it('adopts live bound containers and reports bound dead ones', () => {
    const plan = planStartup({
      live: [sessionBox('sesn_1', 2), sessionBox('sesn_2', 1, false)],
      bindings: [
        { sessionId: 'sesn_1', generation: 2, sandboxId: sessionSandboxName('sesn_1', 2) },
        { sessionId: 'sesn_2', generation: 1, sandboxId: sessionSandboxName('sesn_2', 1) },
      ],
      pools: [],
      now,
    });
    expect(plan.adopt.map((a) => [a.sessionId, a.generation])).toEqual([['sesn_1', 2]]);
    expect(plan.dead.map((d) => d.sessionId)).toEqual(['sesn_2']);
    expect(plan.reap).toEqual([]);
  });

  it('reaps orphans: unbound sessions, stale generations, unrecognised names', () => {
    const foreign: LiveSandbox = { id: 'x', name: 'something-else', labels: { 'berth.managed': 'true' }, running: true, startedAt: null };
    const plan = planStartup({
      live: [sessionBox('sesn_gone', 1), sessionBox('sesn_1', 1), foreign],
      bindings: [{ sessionId: 'sesn_1', generation: 2, sandboxId: sessionSandboxName('sesn_1', 2) }],
      pools: [],
      now,
    });
    expect(plan.reap.map((r) => [r.sandbox.id, r.reason])).toEqual([
      ['id-sesn_gone-1', 'unbound'],
      ['id-sesn_1-1', 'stale_generation'],
      ['x', 'unrecognised'],
    ]);
    expect(plan.adopt).toEqual([]);
  });

  it('leaves alone a running unbound container of the generation its session still asks for (another manager is binding it)', () => {
    const plan = planStartup({
      live: [sessionBox('sesn_1', 2), sessionBox('sesn_2', 1), sessionBox('sesn_3', 1, false), sessionBox('sesn_4', 1)],
      bindings: [{ sessionId: 'sesn_1', generation: 1, sandboxId: sessionSandboxName('sesn_1', 1) }],
      requests: [
        { sessionId: 'sesn_1', generation: 2 },
        { sessionId: 'sesn_2', generation: 1 },
        { sessionId: 'sesn_3', generation: 1 },
        { sessionId: 'sesn_4', generation: 2 },
      ],
      pools: [],
      now,
    });
    expect(plan.pending.map((p) => [p.sessionId, p.generation])).toEqual([
      ['sesn_1', 2],
      ['sesn_2', 1],
    ]);
    // Stopped, or of a generation nobody asks for: still orphans.
    expect(plan.reap.map((r) => [r.sandbox.id, r.reason])).toEqual([
      ['id-sesn_3-1', 'unbound'],
      ['id-sesn_4-1', 'unbound'],
    ]);
    expect(plan.adopt).toEqual([]);
  });

  it('keeps the newest fresh pool containers up to the size and reaps expired, stopped, surplus and disabled ones', () => {
    const plan = planStartup({
      live: [
        poolBox('env_a', 'old', 40),
        poolBox('env_a', 'n1', 1),
        poolBox('env_a', 'n2', 2),
        poolBox('env_a', 'n3', 3),
        poolBox('env_a', 'dead', 1, false),
        poolBox('env_b', 'z', 1),
      ],
      bindings: [],
      pools: [{ environmentId: 'env_a', size: 2, ttlSeconds: 30 * 60 }],
      now,
    });
    expect(plan.warm.map((w) => w.sandbox.id)).toEqual(['id-env_a-n1', 'id-env_a-n2']);
    expect(Object.fromEntries(plan.reap.map((r) => [r.sandbox.id, r.reason]))).toEqual({
      'id-env_a-old': 'ttl_expired',
      'id-env_a-n3': 'surplus',
      'id-env_a-dead': 'not_running',
      'id-env_b-z': 'pool_disabled',
    });
  });

  it('sees a claimed pool container (session name, pool labels) as the session it serves', () => {
    const claimed: LiveSandbox = { ...poolBox('env_a', 'k1', 1), name: sessionSandboxName('sesn_9', 1) };
    const plan = planStartup({
      live: [claimed],
      bindings: [{ sessionId: 'sesn_9', generation: 1, sandboxId: sessionSandboxName('sesn_9', 1) }],
      pools: [{ environmentId: 'env_a', size: 1, ttlSeconds: 60 }],
      now,
    });
    expect(plan.adopt.map((a) => a.sessionId)).toEqual(['sesn_9']);
    expect(plan.warm).toEqual([]);
  });

  it('computes TTL expiry and refill counts', () => {
    expect(isWarmExpired(minutesAgo(10), 600, now)).toBe(true);
    expect(isWarmExpired(minutesAgo(9), 600, now)).toBe(false);
    expect(isWarmExpired(null, 600, now)).toBe(true);
    expect(refillCount(3, 1, 1)).toBe(1);
    expect(refillCount(2, 3, 0)).toBe(0);
  });
});

describe('pool config fingerprint', () => {
  it('reaps warm containers started for another config of their environment', () => {
    const v1 = { ...DEFAULT_SANDBOX_CONFIG, image: 'berth/harness:v1' };
    const v2 = { ...v1, image: 'berth/harness:v2' };
    expect(sandboxConfigFingerprint(v1)).not.toBe(sandboxConfigFingerprint(v2));
    expect(sandboxConfigFingerprint(v1)).toBe(sandboxConfigFingerprint({ ...v1, warmPool: { size: 9, ttlSeconds: 99 } }));
    const old = poolSandboxSpec({ environmentId: 'env_a', slot: 'a1', config: v1, workspace: { id: 'wsp-a1', mounts: [] } });
    const fresh = poolSandboxSpec({ environmentId: 'env_a', slot: 'a2', config: v2, workspace: { id: 'wsp-a2', mounts: [] } });
    const live = [old, fresh].map((s) => ({ id: s.name, name: s.name, labels: s.labels, running: true, startedAt: minutesAgo(1) }));
    const plan = planStartup({ live, bindings: [], pools: [{ environmentId: 'env_a', size: 2, ttlSeconds: 600, fingerprint: sandboxConfigFingerprint(v2) }], now });
    expect(plan.warm.map((w) => w.sandbox.id)).toEqual([fresh.name]);
    expect(plan.reap).toEqual([{ sandbox: expect.objectContaining({ id: old.name }), reason: 'config_changed' }]);
  });

  it('removes the spares no container mounts once past the grace period; a young one may be another manager\'s, about to be mounted', () => {
    const spares = [
      { id: 'wsp-old', madeAt: minutesAgo(10) },
      { id: 'wsp-mounted', madeAt: minutesAgo(10) },
      { id: 'wsp-young', madeAt: minutesAgo(1) },
      { id: 'wsp-at-grace', madeAt: new Date(now.getTime() - SPARE_WORKSPACE_GRACE_MS).toISOString() },
      { id: 'wsp-unreadable', madeAt: '' },
    ];
    expect(orphanSpares({ spares, mounted: new Set(['wsp-mounted']), now })).toEqual(['wsp-old', 'wsp-at-grace']);
    expect(SPARE_WORKSPACE_GRACE_MS).toBeGreaterThan(60_000);
  });
});
