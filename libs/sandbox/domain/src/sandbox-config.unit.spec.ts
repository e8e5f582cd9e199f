import { environmentConfigFrom } from '@berth/contracts';
import { DEFAULT_SANDBOX_CONFIG, DEFAULT_SANDBOX_DEFAULTS, sandboxConfigOf } from './sandbox-config';
import { KEEPALIVE_CMD, poolSandboxSpec, SANDBOX_USER, sessionSandboxSpec } from './sandbox-spec';

describe('sandbox config of an environment', () => {
  it('maps the typed config to engine terms over the operator defaults', () => {
    const config = environmentConfigFrom({
      type: 'cloud',
      image: 'registry.local/team/harness:1.2@sha256:' + 'a'.repeat(64),
      network: 'host',
      resources: { memory_mb: 512, cpus: 0.5, pids: 128, workspace_mb: 2048 },
      idle_timeout_seconds: 600,
      warm_pool_size: 2,
      workspace_snapshots: { keep: 3, max_mb: 100 },
    });
    const defaults = { ...DEFAULT_SANDBOX_DEFAULTS, readOnlyRoot: true, maxLifetimeSeconds: 3600, warmPoolTtlSeconds: 900 };
    expect(sandboxConfigOf(config, defaults)).toEqual({
      image: 'registry.local/team/harness:1.2@sha256:' + 'a'.repeat(64),
      network: 'host',
      memoryBytes: 512 * 1024 * 1024,
      nanoCpus: 500_000_000,
      pidsLimit: 128,
      readOnlyRoot: true,
      workspaceBytes: 2048 * 1024 * 1024,
      idle: { idleTimeoutSeconds: 600, maxLifetimeSeconds: 3600 },
      warmPool: { size: 2, ttlSeconds: 900 },
      snapshots: { keep: 3, maxBytes: 100 * 1024 * 1024 },
    });
  });

  it('leaves the image and the pool size to the operator when the environment says nothing, and takes a built package image over both', () => {
    const config = environmentConfigFrom(null);
    const defaults = { ...DEFAULT_SANDBOX_DEFAULTS, image: 'berth/harness:abc', warmPoolSize: 3 };
    expect(sandboxConfigOf(config, defaults)).toMatchObject({ image: 'berth/harness:abc', warmPool: { size: 3 }, idle: { idleTimeoutSeconds: 900 } });
    expect(sandboxConfigOf(config, defaults, 'berth/env:0123').image).toBe('berth/env:0123');
    expect(sandboxConfigOf(environmentConfigFrom({ type: 'cloud', warm_pool_size: 0 }), defaults).warmPool.size).toBe(0);
    expect(sandboxConfigOf(config, defaults).snapshots).toEqual({ keep: 10, maxBytes: 2048 * 1024 * 1024 });
  });
});

describe('sandbox spec', () => {
  const config = sandboxConfigOf(environmentConfigFrom({ type: 'cloud', network: 'none', resources: { memory_mb: 256, cpus: 1, pids: 64 } }));

  it('derives a non-root, limited, deterministically named session sandbox', () => {
    const spec = sessionSandboxSpec({ sessionId: 'sesn_1', generation: 2, environmentId: 'env_a', config, workspace: { id: 'wss-sesn_1', mounts: [] } });
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

  it('derives pool sandboxes with pool labels and no session', () => {
    const spec = poolSandboxSpec({ environmentId: 'env_a', slot: 'x1', config, workspace: { id: 'wss-x1', mounts: [] } });
    expect(spec.name).toBe('berth-p-env_a-x1');
    expect(spec.labels['berth.pool']).toBe('env_a');
    expect(spec.labels['berth.session']).toBeUndefined();
  });

  it("makes every process of an egress or none sandbox trust the egress's CA (the certificate in the read-only egress mount), and a host sandbox not", () => {
    const spec = (network: 'egress' | 'none' | 'host') =>
      sessionSandboxSpec({ sessionId: 'sesn_1', generation: 1, environmentId: 'env_a', config: sandboxConfigOf(environmentConfigFrom({ type: 'cloud', network })), workspace: { id: 'w', mounts: [] } });
    for (const network of ['egress', 'none'] as const) {
      expect(spec(network).env).toMatchObject({
        NODE_EXTRA_CA_CERTS: '/run/berth/ca.pem',
        SSL_CERT_FILE: '/run/berth/ca-bundle.pem',
        CURL_CA_BUNDLE: '/run/berth/ca-bundle.pem',
        REQUESTS_CA_BUNDLE: '/run/berth/ca-bundle.pem',
        GIT_SSL_CAINFO: '/run/berth/ca-bundle.pem',
      });
      expect(spec(network).egress.mountAt).toBe('/run/berth');
    }
    expect(Object.keys(spec('host').env).filter((name) => /CA|CERT/.test(name))).toEqual([]);
  });
});
