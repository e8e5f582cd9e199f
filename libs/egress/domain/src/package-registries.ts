/**
 * The public package registries `allow_package_managers` opens, by ecosystem (the hosts each
 * client fetches metadata and archives from). Mirrors or private registries go in
 * `allowed_hosts`.
 */
export const PACKAGE_REGISTRY_HOSTS: Readonly<Record<string, readonly string[]>> = {
  npm: ['registry.npmjs.org', 'registry.yarnpkg.com'],
  pip: ['pypi.org', 'files.pythonhosted.org'],
  cargo: ['crates.io', 'index.crates.io', 'static.crates.io'],
  gem: ['rubygems.org', 'index.rubygems.org'],
  go: ['proxy.golang.org', 'sum.golang.org'],
  apt: ['deb.debian.org', 'security.debian.org', 'archive.ubuntu.com', 'security.ubuntu.com'],
};

const ALL = new Set(Object.values(PACKAGE_REGISTRY_HOSTS).flat());

export const isPackageRegistryHost = (host: string): boolean => ALL.has(host);
