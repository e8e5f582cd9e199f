import type { EnvironmentPackages } from '@berth/contracts';
import { IMAGE_BUILD_KEEPALIVE_CMD, NO_MIRRORS, packageImageRecipe, type PackageMirrors } from './package-image';

const NONE: EnvironmentPackages = { type: 'packages', apt: [], cargo: [], gem: [], go: [], npm: [], pip: [] };
const packages = (over: Partial<EnvironmentPackages>): EnvironmentPackages => ({ ...NONE, ...over });
const recipe = (over: Partial<EnvironmentPackages>, mirrors: PackageMirrors = NO_MIRRORS, allowedHosts: string[] = []) =>
  packageImageRecipe({ base: 'berth/harness:latest', packages: packages(over), environmentId: 'env_p', allowedHosts, mirrors });
const PROXY = 'http://127.0.0.1:3128';

describe('the recipe of an environment image', () => {
  it('is null when the environment names no package of a manager Berth installs with', () => {
    expect(recipe({})).toBeNull();
    expect(recipe({ cargo: ['ripgrep'] })).toBeNull();
  });

  it('installs each manager\'s packages as an argv (no shell parses a name), npm without scripts, pip wheels only', () => {
    const r = recipe({ apt: ['jq'], npm: ['cowsay@1.6.0'], pip: ['requests'] });
    expect(r?.steps).toEqual([
      ['/bin/sh', '-c', 'o=; apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get $o install -y -qq --no-install-recommends "$@" && rm -rf /var/lib/apt/lists/*', 'apt-get', 'jq', 'python3-pip'],
      ['npm', 'install', '--global', '--ignore-scripts', '--no-fund', '--no-audit', '--loglevel=error', 'cowsay@1.6.0'],
      ['pip3', 'install', '--break-system-packages', '--no-cache-dir', '--only-binary=:all:', '--disable-pip-version-check', 'requests'],
    ]);
  });

  it('runs its steps through the relay to its egress, PID 1 keeping the relay up', () => {
    const r = recipe({ npm: ['cowsay'] });
    expect(r?.env).toEqual({ HTTP_PROXY: PROXY, HTTPS_PROXY: PROXY, http_proxy: PROXY, https_proxy: PROXY, NO_PROXY: '127.0.0.1,localhost,::1', no_proxy: '127.0.0.1,localhost,::1' });
    expect(r?.keepalive).toBe(IMAGE_BUILD_KEEPALIVE_CMD);
    expect(IMAGE_BUILD_KEEPALIVE_CMD.join(' ')).toContain('socat TCP-LISTEN:3128,bind=127.0.0.1,reuseaddr,fork UNIX-CONNECT:/run/berth/egress.sock');
  });

  it('grants the build the ecosystems it uses and the environment\'s allowed hosts', () => {
    expect(recipe({ npm: ['cowsay'] }, NO_MIRRORS, ['git.corp.example'])?.grant).toEqual({ environmentId: 'env_p', ecosystems: ['npm'], allowedHosts: ['git.corp.example'] });
    // pip needs apt's python3-pip: both ecosystems.
    expect(recipe({ pip: ['requests'] })?.grant.ecosystems).toEqual(['apt', 'pip']);
  });

  it('installs from the operator\'s mirrors, grants their hosts, and leaves the image\'s apt sources alone', () => {
    const mirrors: PackageMirrors = { apt: { url: 'http://apt.mirror.test/debian', keyBase64: 'a2V5' }, npm: 'http://npm.mirror.test/', pip: 'http://pypi.mirror.test/simple' };
    const r = recipe({ apt: ['jq'], npm: ['cowsay'], pip: ['requests'] }, mirrors, ['x.example']);
    expect(r?.env).toMatchObject({ BERTH_APT_MIRROR: 'http://apt.mirror.test/debian', npm_config_registry: 'http://npm.mirror.test/', PIP_INDEX_URL: 'http://pypi.mirror.test/simple', PIP_TRUSTED_HOST: 'pypi.mirror.test' });
    expect(r?.grant.allowedHosts).toEqual(['x.example', 'apt.mirror.test', 'npm.mirror.test', 'pypi.mirror.test']);
    expect(r?.files).toEqual([{ path: '/tmp/berth-build/apt-mirror.gpg', base64: 'a2V5' }]);
    const apt = (r?.steps[0] ?? []).join(' ');
    expect(apt).toContain("printf 'deb [signed-by=/tmp/berth-build/apt-mirror.gpg] %s %s main\\n' \"$BERTH_APT_MIRROR\" \"$VERSION_CODENAME\" > /tmp/berth-build/apt/sources.list");
    expect(apt).toContain('-o Dir::Etc::SourceList=/tmp/berth-build/apt/sources.list -o Dir::Etc::SourceParts=/tmp/berth-build/apt/parts');
    expect(apt).not.toContain('/etc/apt/sources.list');
  });

  it('uses only the mirrors of the managers it installs with; an https pip index keeps its TLS checks', () => {
    const mirrors: PackageMirrors = { apt: { url: 'http://apt.mirror.test/debian', keyBase64: null }, npm: 'http://npm.mirror.test/', pip: 'https://pypi.mirror.test/simple' };
    const npmOnly = recipe({ npm: ['cowsay'] }, mirrors);
    expect(npmOnly?.env).not.toHaveProperty('BERTH_APT_MIRROR');
    expect(npmOnly?.grant.allowedHosts).toEqual(['npm.mirror.test']);
    expect(npmOnly?.files).toEqual([]);
    const pip = recipe({ pip: ['requests'] }, mirrors);
    expect(pip?.env).toMatchObject({ PIP_INDEX_URL: 'https://pypi.mirror.test/simple' });
    expect(pip?.env).not.toHaveProperty('PIP_TRUSTED_HOST');
    // A mirror signed with Debian's keys needs no key of its own.
    expect((pip?.steps[0] ?? []).join(' ')).toContain("printf 'deb %s %s main\\n'");
  });
});
