import type { SandboxSpec } from '@berth/ports';
import { assertHardenedSpec, containerCreateOptions, withEgressMount } from './host-config';

const spec = (overrides: Partial<SandboxSpec> = {}): SandboxSpec => ({
  name: 'berth-s-sesn_1-g1',
  image: 'berth/base:bookworm',
  labels: { 'berth.managed': 'true' },
  env: { HOME: '/home/agent' },
  network: 'none',
  user: '1000:1000',
  workdir: '/workspace',
  memoryBytes: 512 * 1024 * 1024,
  nanoCpus: 1e9,
  pidsLimit: 128,
  readOnlyRoot: false,
  cmd: ['sleep', 'infinity'],
  ...overrides,
});

describe('container create options', () => {
  it('always drops every capability, forbids privilege gain and applies the limits', () => {
    const options = containerCreateOptions(spec());
    expect(options).toMatchObject({ name: 'berth-s-sesn_1-g1', User: '1000:1000', Env: ['HOME=/home/agent'], Labels: { 'berth.managed': 'true' } });
    expect(options.HostConfig).toMatchObject({
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      Privileged: false,
      PidsLimit: 128,
      Memory: 512 * 1024 * 1024,
      MemorySwap: 512 * 1024 * 1024,
      NanoCpus: 1e9,
      NetworkMode: 'none',
      ReadonlyRootfs: false,
      Mounts: [],
    });
    expect(options.HostConfig?.CapAdd).toBeUndefined();
    expect(options.HostConfig?.Binds).toBeUndefined();
  });

  it('read-only root gets volumes for workspace and home and a tmpfs /tmp, keeping an explicit workspace mount', () => {
    const options = containerCreateOptions(spec({ readOnlyRoot: true, mounts: [{ type: 'volume', source: 'ws-sesn_1', target: '/workspace' }] }));
    expect(options.HostConfig?.ReadonlyRootfs).toBe(true);
    expect(options.HostConfig?.Tmpfs).toEqual({ '/tmp': expect.stringContaining('size=') });
    expect(options.HostConfig?.Mounts).toEqual([
      { Type: 'volume', Source: 'ws-sesn_1', Target: '/workspace', ReadOnly: false },
      { Type: 'volume', Source: '', Target: '/home/agent', ReadOnly: false },
    ]);
  });

  it.each([
    ['/var/run/docker.sock'],
    ['/run/berth-docker.sock'],
    ['/run/'],
    ['/var/run'],
    ['/'],
    ['/var/lib/docker/volumes'],
    ['/home/me/podman.sock'],
  ])('refuses a bind of %s', (source) => {
    expect(() => containerCreateOptions(spec({ mounts: [{ type: 'bind', source, target: '/mnt' }] }))).toThrow(
      expect.objectContaining({ code: 'VALIDATION_ERROR', field: 'mounts[0].source' }),
    );
  });

  it('refuses any bind from inside the egress root, even one not ending in .sock', () => {
    for (const source of ['/run/berth/egress', '/run/berth/egress/0123456789abcdef/socket', '/run/berth/egress/0123456789abcdef/name']) {
      expect(() => containerCreateOptions(spec({ mounts: [{ type: 'bind', source, target: '/mnt' }] }), '/run/berth/egress')).toThrow(
        expect.objectContaining({ code: 'VALIDATION_ERROR', field: 'mounts[0].source' }),
      );
    }
  });

  it('adds the sandbox its own egress directory, read-only, with the labels that find it and the relay port', () => {
    const options = withEgressMount(containerCreateOptions(spec()), { id: '0123456789abcdef', socketDir: '/run/berth/egress/0123456789abcdef/socket', mountAt: '/run/berth', relayPort: 3128 });
    expect(options.HostConfig?.Mounts).toEqual([{ Type: 'bind', Source: '/run/berth/egress/0123456789abcdef/socket', Target: '/run/berth', ReadOnly: true }]);
    expect(options.Labels).toMatchObject({ 'berth.egress-dir': '0123456789abcdef', 'berth.egress-port': '3128' });
    expect(options.Env).toContain('BERTH_EGRESS_RELAY_PORT=3128');
    expect(options.HostConfig).toMatchObject({ CapDrop: ['ALL'], NetworkMode: 'none' });
  });

  it('allows an ordinary bind', () => {
    expect(() => assertHardenedSpec(spec({ mounts: [{ type: 'bind', source: '/srv/berth/cache', target: '/cache', readOnly: true }] }))).not.toThrow();
  });

  it.each([['root'], ['0'], ['0:0'], [''], ['00:1000']])('refuses to run as user %j', (user) => {
    expect(() => assertHardenedSpec(spec({ user }))).toThrow(expect.objectContaining({ field: 'user' }));
  });

  it('refuses joining another container\'s network and nonsense limits', () => {
    expect(() => assertHardenedSpec(spec({ network: 'container:abc' }))).toThrow(expect.objectContaining({ field: 'network' }));
    expect(() => assertHardenedSpec(spec({ pidsLimit: 0 }))).toThrow(expect.objectContaining({ field: 'pidsLimit' }));
    expect(() => assertHardenedSpec(spec({ memoryBytes: -1 }))).toThrow(expect.objectContaining({ field: 'memoryBytes' }));
  });
});
