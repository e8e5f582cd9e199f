import type { EnvironmentPackages } from '@berth/contracts';

/**
 * How to build an environment's sandbox image: its base image plus one `RUN` per package manager,
 * each an argv (Docker's exec form: no shell parses the package names). Same shape as
 * `ImageRecipe` in `@berth/ports`.
 */
export type ImageRecipeDraft = Readonly<{ base: string; steps: readonly (readonly string[])[] }>;

/**
 * The recipe for an environment's packages on `base`, or null when it names none. Nothing a
 * package ships runs while it installs: npm skips install scripts, pip takes wheels only (no
 * `setup.py`); apt packages come from the base image's Debian mirror.
 */
export function packageImageRecipe(base: string, packages: EnvironmentPackages): ImageRecipeDraft | null {
  const apt = [...packages.apt, ...(packages.pip.length > 0 ? ['python3-pip'] : [])];
  const steps: string[][] = [];
  if (apt.length > 0) {
    steps.push(['/bin/sh', '-c', 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" && rm -rf /var/lib/apt/lists/*', 'apt-get', ...apt]);
  }
  if (packages.npm.length > 0) steps.push(['npm', 'install', '--global', '--ignore-scripts', '--no-fund', '--no-audit', '--loglevel=error', ...packages.npm]);
  if (packages.pip.length > 0) steps.push(['pip3', 'install', '--break-system-packages', '--no-cache-dir', '--only-binary=:all:', '--disable-pip-version-check', ...packages.pip]);
  return steps.length === 0 ? null : { base, steps };
}
