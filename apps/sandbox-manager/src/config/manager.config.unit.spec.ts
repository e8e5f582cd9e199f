import { ManagerConfigSchema } from './manager.config';

const hosts = (value: unknown) => ManagerConfigSchema.safeParse({ BERTH_SANDBOX_HOSTS: typeof value === 'string' ? value : JSON.stringify(value) });
const host = (name: string, over: Record<string, unknown> = {}) => ({ name, docker_host: `unix:///run/${name}.sock`, egress_dir: `/run/berth/egress-${name}`, max_sandboxes: 10, ...over });

describe('BERTH_SANDBOX_HOSTS', () => {
  it('unset: the one engine of DOCKER_HOST', () => {
    const config = ManagerConfigSchema.parse({ DOCKER_HOST: 'unix:///run/x.sock' });
    expect(config.sandboxHosts).toEqual([]);
    expect(config.dockerHost).toBe('unix:///run/x.sock');
  });

  it('reads a list of hosts', () => {
    const parsed = hosts([host('a'), host('b', { docker_host: 'tcp://10.0.0.2:2375', max_sandboxes: 40 })]);
    expect(parsed.success && parsed.data.sandboxHosts).toEqual([
      { name: 'a', dockerHost: 'unix:///run/a.sock', egressDir: '/run/berth/egress-a', maxSandboxes: 10 },
      { name: 'b', dockerHost: 'tcp://10.0.0.2:2375', egressDir: '/run/berth/egress-b', maxSandboxes: 40 },
    ]);
  });

  it.each([
    ['not JSON', '[{name:'],
    ['a name Kubernetes or a label could not carry', [host('Host_A')]],
    ['two hosts with one name', [host('a'), host('a', { egress_dir: '/x' })]],
    ['two hosts sharing an egress directory', [host('a'), host('b', { egress_dir: '/run/berth/egress-a' })]],
    ['no limit', [{ ...host('a'), max_sandboxes: undefined }]],
    ['a zero limit', [host('a', { max_sandboxes: 0 })]],
    ['an unknown field', [host('a', { socket: '/x' })]],
    ['an address that is no engine URL', [host('a', { docker_host: '/run/a.sock' })]],
  ])('refuses %s', (_what, value) => {
    expect(hosts(value).success).toBe(false);
  });
});

describe('environment image builds', () => {
  it('reads the package mirrors (empty is unset)', () => {
    expect(ManagerConfigSchema.parse({}).mirrors).toEqual({ apt: null, aptKeyFile: null, npm: null, pip: null });
    const config = ManagerConfigSchema.parse({ BERTH_APT_MIRROR: 'http://apt.corp.example/debian', BERTH_APT_MIRROR_KEY: '/etc/berth/apt.gpg', BERTH_NPM_REGISTRY: 'https://npm.corp.example/', BERTH_PIP_INDEX_URL: '' });
    expect(config.mirrors).toEqual({ apt: 'http://apt.corp.example/debian', aptKeyFile: '/etc/berth/apt.gpg', npm: 'https://npm.corp.example/', pip: null });
  });

  it.each([['not a URL', 'mirror.example'], ['another scheme', 'ftp://mirror.example/debian']])('refuses a mirror that is %s', (_what, value) => {
    expect(ManagerConfigSchema.safeParse({ BERTH_APT_MIRROR: value }).success).toBe(false);
  });

  it('refuses the retired BERTH_IMAGE_BUILD_NETWORK, saying builds go through the egress', () => {
    const parsed = ManagerConfigSchema.safeParse({ BERTH_IMAGE_BUILD_NETWORK: 'host' });
    expect(parsed.success).toBe(false);
    expect(JSON.stringify(parsed.error?.issues)).toContain('retired: environment image builds reach their package registries through the egress');
    expect(ManagerConfigSchema.safeParse({ BERTH_IMAGE_BUILD_NETWORK: '' }).success).toBe(true);
  });
});
