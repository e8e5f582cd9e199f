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

describe('BERTH_SANDBOX_RUNTIME', () => {
  const k8s = { BERTH_SANDBOX_RUNTIME: 'kubernetes', BERTH_K8S_NAMESPACE: 'berth-sandboxes', BERTH_K8S_EGRESS_SERVICE: 'berth/egress' };
  const problems = (env: Record<string, string>) => {
    const parsed = ManagerConfigSchema.safeParse(env);
    return parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
  };

  it('defaults to Docker, with no Kubernetes settings', () => {
    const config = ManagerConfigSchema.parse({});
    expect(config.sandboxRuntime).toBe('docker');
    expect(config.kubernetes).toBeNull();
  });

  it('reads the Kubernetes settings: in-cluster unless a kubeconfig is named, the cluster\'s default storage class unless one is', () => {
    expect(ManagerConfigSchema.parse(k8s).kubernetes).toEqual({ kubeconfig: 'in-cluster', namespace: 'berth-sandboxes', egressService: 'berth/egress', storageClass: null });
    expect(ManagerConfigSchema.parse({ ...k8s, BERTH_K8S_KUBECONFIG: '/etc/berth/kubeconfig', BERTH_K8S_STORAGE_CLASS: 'fast' }).kubernetes).toMatchObject({ kubeconfig: '/etc/berth/kubeconfig', storageClass: 'fast' });
  });

  it.each([
    ['no namespace', { BERTH_K8S_NAMESPACE: undefined }, 'BERTH_K8S_NAMESPACE: required'],
    ['a namespace that is no DNS label', { BERTH_K8S_NAMESPACE: 'Berth_Sandboxes' }, 'BERTH_K8S_NAMESPACE: a namespace name'],
    ['no egress Service', { BERTH_K8S_EGRESS_SERVICE: undefined }, 'BERTH_K8S_EGRESS_SERVICE: required'],
    ['an egress Service without its namespace', { BERTH_K8S_EGRESS_SERVICE: 'egress' }, 'BERTH_K8S_EGRESS_SERVICE: namespace/name'],
    ['Docker hosts', { BERTH_SANDBOX_HOSTS: JSON.stringify([{ name: 'a', docker_host: 'unix:///a.sock', egress_dir: '/e', max_sandboxes: 1 }]) }, 'BERTH_SANDBOX_HOSTS: lists Docker engines'],
    ['the host network', { BERTH_ALLOW_HOST_NETWORK: 'true' }, 'BERTH_ALLOW_HOST_NETWORK: a Kubernetes sandbox never'],
    ['a Docker workspace kind', { BERTH_WORKSPACE_STORAGE: 'loop' }, 'BERTH_WORKSPACE_STORAGE: Kubernetes workspaces are PersistentVolumeClaims'],
    ['an unknown runtime', { BERTH_SANDBOX_RUNTIME: 'podman' }, 'BERTH_SANDBOX_RUNTIME:'],
  ])('refuses %s, naming the setting', (_what, over, expected) => {
    const env = Object.fromEntries(Object.entries({ ...k8s, ...over }).filter(([, v]) => v !== undefined)) as Record<string, string>;
    expect(problems(env)).toEqual(expect.arrayContaining([expect.stringContaining(expected)]));
  });
});
