import { describeBuildDenial, imageBuildGrantFrom, imageBuildHosts, imageBuildPolicy } from './image-build-policy';
import { decideHost } from './networking-policy';

const grant = { environmentId: 'env_b', ecosystems: ['apt', 'npm'], allowedHosts: ['mirror.corp.example', '*.widgets.dev'] };

describe('what an environment image build may reach', () => {
  it('reaches the registries of the ecosystems it installs from and its allowed hosts, nothing else', () => {
    const policy = imageBuildPolicy(grant);
    for (const host of ['deb.debian.org', 'security.debian.org', 'registry.npmjs.org', 'mirror.corp.example', 'a.widgets.dev']) expect(decideHost(policy, host)).toMatchObject({ allowed: true });
    // pip is not among its ecosystems; an arbitrary host is no registry.
    for (const host of ['pypi.org', 'files.pythonhosted.org', 'crates.io', 'evil.example', 'widgets.dev']) expect(decideHost(policy, host)).toMatchObject({ allowed: false, reason: 'host_not_allowed' });
  });

  it('is limited whatever the environment itself allows (an unrestricted environment gives its build the registries only)', () => {
    expect(imageBuildPolicy({ environmentId: 'env_u', ecosystems: ['pip'], allowedHosts: [] }).networking).toEqual({ type: 'limited', allowedHosts: ['pypi.org', 'files.pythonhosted.org'], allowPackageManagers: false, allowMcpServers: false });
    expect(imageBuildHosts({ environmentId: 'env_u', ecosystems: ['no-such-ecosystem'], allowedHosts: [] })).toEqual([]);
  });

  it('reads the grant file the sandbox-manager writes, and nothing that is not one', () => {
    expect(imageBuildGrantFrom({ environment_id: 'env_b', ecosystems: ['npm'], allowed_hosts: ['Mirror.Example', 'not a host', 7, '*'] })).toEqual({ environmentId: 'env_b', ecosystems: ['npm'], allowedHosts: ['mirror.example'] });
    for (const bad of [null, 'x', [], {}, { environment_id: '' }, { environment_id: 3 }]) expect(imageBuildGrantFrom(bad)).toBeNull();
    expect(imageBuildGrantFrom({ environment_id: 'env_b' })).toEqual({ environmentId: 'env_b', ecosystems: [], allowedHosts: [] });
  });

  it('tells a refused build which hosts it may reach and how to add one', () => {
    const denial = describeBuildDenial(grant, { host: 'evil.example', port: 443, reason: 'host_not_allowed', setting: 'config.networking.allowed_hosts' });
    expect(denial).toMatchObject({ host: 'evil.example', port: 443, reason: 'host_not_allowed', setting: 'config.networking.allowed_hosts' });
    expect(denial.message).toBe(
      'Berth egress refused evil.example:443: the image build of environment env_b reaches only the package registries of its packages and the environment\'s allowed hosts ' +
        '(deb.debian.org, security.debian.org, archive.ubuntu.com, security.ubuntu.com, registry.npmjs.org, registry.yarnpkg.com, mirror.corp.example, *.widgets.dev). ' +
        'Add "evil.example" to config.networking.allowed_hosts (limited networking), or have the operator name a mirror (BERTH_APT_MIRROR, BERTH_NPM_REGISTRY, BERTH_PIP_INDEX_URL).',
    );
    // A registry of another ecosystem is refused the same way (no allow_package_managers to point at).
    expect(describeBuildDenial(grant, { host: 'pypi.org', port: 443, reason: 'host_not_allowed', setting: 'config.networking.allow_package_managers' }).setting).toBe('config.networking.allowed_hosts');
  });

  it('keeps the platform rule\'s words: no setting allows those', () => {
    const denial = describeBuildDenial(grant, { host: '127.0.0.1', port: 4222, reason: 'platform_address', setting: null, address: { ip: '127.0.0.1', range: 'loopback' } });
    expect(denial).toMatchObject({ reason: 'platform_address', setting: null });
    expect(denial.message).toBe('Berth egress refused 127.0.0.1:4222 (loopback): sandboxes never reach this machine, the platform or private networks, whatever the environment allows.');
  });
});
