import type { EnvironmentPackages } from '@berth/contracts';
import { EGRESS_MOUNT, EGRESS_RELAY_PORT, EGRESS_SOCKET_FILE, relayUrl } from './sandbox-spec';

/** Same shape as `ImageRecipe` in `@berth/ports` (this module is pure and imports no ports). */
export type ImageRecipeDraft = Readonly<{
  base: string;
  steps: readonly (readonly string[])[];
  env: Readonly<Record<string, string>>;
  files: readonly Readonly<{ path: string; base64: string }>[];
  keepalive: readonly string[];
  grant: Readonly<{ environmentId: string; ecosystems: readonly string[]; allowedHosts: readonly string[] }>;
}>;

/**
 * Package mirrors the operator names (teams run internal ones; tests serve a tiny one). `apt` is a
 * Debian archive (the layout of deb.debian.org/debian) signed by Debian, or by `keyBase64` (an
 * OpenPGP public key, binary) when the mirror re-signs; `npm` a registry URL; `pip` an index URL.
 */
export type PackageMirrors = Readonly<{ apt: Readonly<{ url: string; keyBase64: string | null }> | null; npm: string | null; pip: string | null }>;

export const NO_MIRRORS: PackageMirrors = { apt: null, npm: null, pip: null };

/** Where the build keeps what it needs only while it runs (removed before the commit). */
export const IMAGE_BUILD_DIR = '/tmp/berth-build';
const APT_MIRROR_KEY = `${IMAGE_BUILD_DIR}/apt-mirror.gpg`;

/**
 * PID 1 of a build container: the sandbox's relay to its egress socket, on the same port, and a
 * wait that exits on SIGTERM. The port is in the command, not the environment, so nothing of the
 * build's is left in the image's variables.
 */
export const IMAGE_BUILD_KEEPALIVE_CMD: readonly string[] = [
  '/bin/sh',
  '-c',
  "trap 'exit 0' TERM INT; " +
    `(while :; do socat TCP-LISTEN:${EGRESS_RELAY_PORT},bind=127.0.0.1,reuseaddr,fork UNIX-CONNECT:${EGRESS_MOUNT}/${EGRESS_SOCKET_FILE},retry=60,interval=0.5; sleep 1; done) >/dev/null 2>&1 & ` +
    'sleep infinity & wait',
];

/**
 * The relay as every step's proxy. Only the proxy variables: a build holds no credential, so the
 * egress never terminates its TLS and the egress CA's trust variables (`egressTrustEnv`) have no
 * use here (their files appear only once the egress serves the directory).
 */
function buildProxyEnv(): Record<string, string> {
  const proxy = relayUrl(EGRESS_RELAY_PORT);
  const noProxy = '127.0.0.1,localhost,::1';
  return { HTTP_PROXY: proxy, HTTPS_PROXY: proxy, http_proxy: proxy, https_proxy: proxy, NO_PROXY: noProxy, no_proxy: noProxy };
}

const APT_INSTALL = 'DEBIAN_FRONTEND=noninteractive apt-get $o install -y -qq --no-install-recommends "$@" && rm -rf /var/lib/apt/lists/*';

/**
 * apt from the image's own sources, or only from the mirror: a sources list of the build's own
 * (the image's sources stay as they are), for the image's Debian release.
 */
function aptStep(packages: readonly string[], mirror: PackageMirrors['apt']): string[] {
  if (mirror === null) return ['/bin/sh', '-c', `o=; apt-get update -qq && ${APT_INSTALL}`, 'apt-get', ...packages];
  const signedBy = mirror.keyBase64 === null ? '' : ` [signed-by=${APT_MIRROR_KEY}]`;
  const script =
    `. /etc/os-release && mkdir -p ${IMAGE_BUILD_DIR}/apt/parts && ` +
    `printf 'deb${signedBy} %s %s main\\n' "$BERTH_APT_MIRROR" "$VERSION_CODENAME" > ${IMAGE_BUILD_DIR}/apt/sources.list && ` +
    `o="-o Dir::Etc::SourceList=${IMAGE_BUILD_DIR}/apt/sources.list -o Dir::Etc::SourceParts=${IMAGE_BUILD_DIR}/apt/parts" && ` +
    `apt-get $o update -qq && ${APT_INSTALL}`;
  return ['/bin/sh', '-c', script, 'apt-get', ...packages];
}

function mirrorEnv(mirrors: PackageMirrors, uses: Readonly<{ apt: boolean; npm: boolean; pip: boolean }>): Record<string, string> {
  const env: Record<string, string> = {};
  if (uses.apt && mirrors.apt !== null) env['BERTH_APT_MIRROR'] = mirrors.apt.url;
  if (uses.npm && mirrors.npm !== null) env['npm_config_registry'] = mirrors.npm;
  if (uses.pip && mirrors.pip !== null) {
    env['PIP_INDEX_URL'] = mirrors.pip;
    // pip refuses a plain-HTTP index unless its host is trusted; an https one keeps TLS checks.
    const url = new URL(mirrors.pip);
    if (url.protocol === 'http:') env['PIP_TRUSTED_HOST'] = url.hostname;
  }
  return env;
}

export type PackageImageInput = Readonly<{
  base: string;
  packages: EnvironmentPackages;
  environmentId: string;
  /** The environment's `networking.allowed_hosts` (none when its networking is unrestricted). */
  allowedHosts: readonly string[];
  mirrors: PackageMirrors;
}>;

/**
 * The recipe for an environment's packages on `base`, or null when it names none. Nothing a
 * package ships runs while it installs: npm skips install scripts, pip takes wheels only (no
 * `setup.py`); apt packages come from a signed archive. The build reaches only the registries of
 * the ecosystems it uses (or their mirrors) and the environment's allowed hosts, through the egress.
 */
export function packageImageRecipe(input: PackageImageInput): ImageRecipeDraft | null {
  const { packages, mirrors } = input;
  const apt = [...packages.apt, ...(packages.pip.length > 0 ? ['python3-pip'] : [])];
  const uses = { apt: apt.length > 0, npm: packages.npm.length > 0, pip: packages.pip.length > 0 };
  const steps: string[][] = [];
  if (uses.apt) steps.push(aptStep(apt, mirrors.apt));
  if (uses.npm) steps.push(['npm', 'install', '--global', '--ignore-scripts', '--no-fund', '--no-audit', '--loglevel=error', ...packages.npm]);
  if (uses.pip) steps.push(['pip3', 'install', '--break-system-packages', '--no-cache-dir', '--only-binary=:all:', '--disable-pip-version-check', ...packages.pip]);
  if (steps.length === 0) return null;
  const mirrorUrls = [uses.apt ? mirrors.apt?.url : undefined, uses.npm ? mirrors.npm : undefined, uses.pip ? mirrors.pip : undefined].filter((u): u is string => u != null);
  const key = uses.apt ? (mirrors.apt?.keyBase64 ?? null) : null;
  return {
    base: input.base,
    steps,
    env: { ...buildProxyEnv(), ...mirrorEnv(mirrors, uses) },
    files: key === null ? [] : [{ path: APT_MIRROR_KEY, base64: key }],
    keepalive: IMAGE_BUILD_KEEPALIVE_CMD,
    grant: {
      environmentId: input.environmentId,
      ecosystems: (['apt', 'npm', 'pip'] as const).filter((e) => uses[e]),
      allowedHosts: [...new Set([...input.allowedHosts, ...mirrorUrls.map((u) => new URL(u).hostname.toLowerCase())])],
    },
  };
}
