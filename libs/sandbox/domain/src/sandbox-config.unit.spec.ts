import { ValidationError } from '@berth/core';
import { DEFAULT_SANDBOX_CONFIG, sandboxConfigFrom, sandboxNetworkFrom } from './sandbox-config';
import { EGRESS_MOUNT, EGRESS_RELAY_PORT, KEEPALIVE_CMD, poolSandboxSpec, sandboxConfigFingerprint, SANDBOX_USER, sessionSandboxSpec } from './sandbox-spec';

describe('sandbox config from an environment', () => {
  it('applies the defaults when the environment says nothing', () => {
    expect(sandboxConfigFrom({})).toEqual(DEFAULT_SANDBOX_CONFIG);
    expect(sandboxConfigFrom(undefined)).toEqual(DEFAULT_SANDBOX_CONFIG);
  });

  it('reads image, network, resources, read-only root, idle policy and warm pool', () => {
    const config = sandboxConfigFrom({
      type: 'cloud',
      image: 'registry.local/team/harness:1.2@sha256:' + 'a'.repeat(64),
      network: 'host',
      resources: { memory_mb: 512, cpus: 0.5, pids: 128 },
      read_only_root: true,
      idle_policy: { idle_timeout_seconds: 600, max_lifetime_seconds: 3600 },
      warm_pool: { size: 2, ttl_seconds: 900 },
    });
    expect(config).toEqual({
      image: 'registry.local/team/harness:1.2@sha256:' + 'a'.repeat(64),
      network: 'host',
      memoryBytes: 512 * 1024 * 1024,
      nanoCpus: 500_000_000,
      pidsLimit: 128,
      readOnlyRoot: true,
      idle: { idleTimeoutSeconds: 600, maxLifetimeSeconds: 3600 },
      warmPool: { size: 2, ttlSeconds: 900 },
    });
  });

  it.each([
    [{ network: 'container:abc' }, 'config.network'],
    [{ image: 'bad image; rm -rf /' }, 'config.image'],
    [{ resources: { memory_mb: 1 } }, 'config.resources.memory_mb'],
    [{ resources: { cpus: 'two' } }, 'config.resources.cpus'],
    [{ resources: { pids: 10.5 } }, 'config.resources.pids'],
    [{ resources: [] }, 'config.resources'],
    [{ read_only_root: 'yes' }, 'config.read_only_root'],
    [{ idle_policy: { idle_timeout_seconds: 0 } }, 'config.idle_policy.idle_timeout_seconds'],
    [{ warm_pool: { size: 1000 } }, 'config.warm_pool.size'],
    [[], 'config'],
  ])('refuses %j naming %s', (raw, field) => {
    let error: unknown;
    try {
      sandboxConfigFrom(raw);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).field).toBe(field);
  });

  it('reads the network: egress by default, the old default bridge as egress, none and host as given', () => {
    expect(sandboxNetworkFrom({})).toBe('egress');
    expect(sandboxNetworkFrom({ network: 'bridge' })).toBe('egress');
    expect(sandboxNetworkFrom({ network: 'none' })).toBe('none');
    expect(sandboxNetworkFrom({ network: 'host' })).toBe('host');
    expect(() => sandboxNetworkFrom({ network: 'bridge2' })).toThrow(expect.objectContaining({ field: 'config.network' }));
  });

  it('lets an environment remove the lifetime cap the defaults set', () => {
    const defaults = { ...DEFAULT_SANDBOX_CONFIG, idle: { idleTimeoutSeconds: 60, maxLifetimeSeconds: 3600 } };
    expect(sandboxConfigFrom({ idle_policy: { max_lifetime_seconds: null } }, defaults).idle.maxLifetimeSeconds).toBeNull();
    expect(sandboxConfigFrom({}, defaults).idle.maxLifetimeSeconds).toBe(3600);
  });
});

describe('sandbox spec', () => {
  const config = sandboxConfigFrom({ network: 'none', resources: { memory_mb: 256, cpus: 1, pids: 64 } });

  it('derives a non-root, limited, deterministically named session sandbox', () => {
    const spec = sessionSandboxSpec({ sessionId: 'sesn_1', generation: 2, environmentId: 'env_a', config });
    expect(spec).toMatchObject({
      name: 'berth-s-sesn_1-g2',
      image: DEFAULT_SANDBOX_CONFIG.image,
      user: SANDBOX_USER,
      network: 'none',
      memoryBytes: 256 * 1024 * 1024,
      nanoCpus: 1e9,
      pidsLimit: 64,
      cmd: KEEPALIVE_CMD,
      labels: { 'berth.session': 'sesn_1', 'berth.generation': '2', 'berth.environment': 'env_a', 'berth.managed': 'true' },
    });
    expect(spec.user.startsWith('0')).toBe(false);
  });

  it('gives egress and none sandboxes no network, the egress mount, the relay and proxy variables pointing at it', () => {
    for (const network of ['egress', 'none'] as const) {
      const spec = sessionSandboxSpec({ sessionId: 'sesn_1', generation: 1, environmentId: 'env_a', config: sandboxConfigFrom({ network }) });
      expect(spec.network).toBe('none');
      expect(spec.egress).toEqual({ mountAt: EGRESS_MOUNT, relayPort: EGRESS_RELAY_PORT });
      expect(spec.env).toMatchObject({ HTTPS_PROXY: `http://127.0.0.1:${EGRESS_RELAY_PORT}`, http_proxy: `http://127.0.0.1:${EGRESS_RELAY_PORT}`, NO_PROXY: '127.0.0.1,localhost,::1' });
    }
    expect(KEEPALIVE_CMD.join(' ')).toContain(`UNIX-CONNECT:${EGRESS_MOUNT}/egress.sock,retry=60,interval=0.5`);
  });

  it('gives a host sandbox the host network, a relay port to be allocated and no proxy variables', () => {
    const spec = sessionSandboxSpec({ sessionId: 'sesn_1', generation: 1, environmentId: 'env_a', config: sandboxConfigFrom({ network: 'host' }) });
    expect(spec.network).toBe('host');
    expect(spec.egress.relayPort).toBeNull();
    expect(Object.keys(spec.env)).toEqual(['HOME']);
  });

  it('fingerprints the network mode, so a warm container never serves an environment whose network changed', () => {
    expect(sandboxConfigFingerprint(sandboxConfigFrom({ network: 'none' }))).not.toBe(sandboxConfigFingerprint(sandboxConfigFrom({})));
  });

  it('derives pool sandboxes with pool labels and no session', () => {
    const spec = poolSandboxSpec({ environmentId: 'env_a', slot: 'x1', config });
    expect(spec.name).toBe('berth-p-env_a-x1');
    expect(spec.labels['berth.pool']).toBe('env_a');
    expect(spec.labels['berth.session']).toBeUndefined();
  });
});
