import { DEFAULT_SANDBOX_NETWORK, normalizeHost, sandboxNetworkOf } from '@berth/contracts';
import type { EnvironmentConfigInput } from './environments.schemas';

/** Defaults for Berth's sandbox knobs. */
export const ENVIRONMENT_DEFAULTS = {
  harness: 'claude-code',
  network: DEFAULT_SANDBOX_NETWORK,
  resources: { memory_mb: 2048, cpus: 2, pids: 512 },
  idle_timeout_seconds: 900,
  permission_mode: 'always_allow',
} as const;

const list = (v: readonly string[] | null | undefined): readonly string[] => v ?? [];

/** The stored (and returned) config: every field present, the Managed Agents shape first. */
export function normalizeEnvironmentConfig(input: EnvironmentConfigInput | null | undefined): Record<string, unknown> {
  const c: EnvironmentConfigInput = input ?? { type: 'cloud' };
  const berth = {
    harness: c.harness ?? ENVIRONMENT_DEFAULTS.harness,
    image: c.image ?? null,
    network: sandboxNetworkOf(c.network) ?? ENVIRONMENT_DEFAULTS.network,
    resources: { ...ENVIRONMENT_DEFAULTS.resources, ...(c.resources ?? {}) },
    idle_timeout_seconds: c.idle_timeout_seconds ?? ENVIRONMENT_DEFAULTS.idle_timeout_seconds,
    permission_mode: c.permission_mode ?? ENVIRONMENT_DEFAULTS.permission_mode,
    model: c.model ?? null,
  };
  if (c.type === 'self_hosted') return { type: 'self_hosted', ...berth };
  const n = c.networking;
  const networking =
    !n || n.type === 'unrestricted'
      ? { type: 'unrestricted' }
      : { type: 'limited', allowed_hosts: list(n.allowed_hosts).map(normalizeHost), allow_mcp_servers: n.allow_mcp_servers ?? false, allow_package_managers: n.allow_package_managers ?? false };
  const p = c.packages;
  const packages = { type: 'packages', apt: list(p?.apt), cargo: list(p?.cargo), gem: list(p?.gem), go: list(p?.go), npm: list(p?.npm), pip: list(p?.pip) };
  return { type: 'cloud', networking, packages, ...berth };
}

/** An update's config: fields it leaves out keep their current value. */
export function mergeEnvironmentConfig(current: Readonly<Record<string, unknown>>, update: EnvironmentConfigInput): Record<string, unknown> {
  const given = Object.fromEntries(Object.entries(update).filter(([, v]) => v !== undefined));
  return normalizeEnvironmentConfig({ ...current, ...given } as EnvironmentConfigInput);
}
