import { isHostName, isIpLiteral, normalizeHost } from '@berth/contracts';
import { hostMatches } from './hosts';
import { isPackageRegistryHost } from './package-registries';
import { sandboxNetworkOf, type SandboxNetwork } from '@berth/contracts';

/** An environment's Managed Agents `config.networking`, read once. */
export type Networking =
  | Readonly<{ type: 'unrestricted' }>
  | Readonly<{ type: 'limited'; allowedHosts: readonly string[]; allowPackageManagers: boolean; allowMcpServers: boolean }>;

/** What the egress enforces for one sandbox: its environment's settings and its agent's MCP hosts. */
export type EgressPolicy = Readonly<{
  environmentId: string;
  network: SandboxNetwork;
  networking: Networking;
  /** Hosts of the agent's `mcp_servers` URLs (for `allow_mcp_servers`). */
  mcpHosts: readonly string[];
}>;

type Raw = Readonly<Record<string, unknown>>;
const record = (v: unknown): Raw => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Raw) : {});

/** `config.network` (absent: `egress`); a stored value the egress cannot read is taken as `none` (fail closed). */
function networkOf(config: unknown): SandboxNetwork {
  const value = record(config)['network'];
  return value === undefined || value === null ? 'egress' : (sandboxNetworkOf(value) ?? 'none');
}

/**
 * Reads `config.networking` (absent: `unrestricted`, the Managed Agents default). A stored value
 * the egress cannot read is taken as `limited` with nothing allowed: it fails closed.
 */
export function networkingFrom(config: unknown): Networking {
  const networking = record(config)['networking'];
  if (networking === undefined || networking === null) return { type: 'unrestricted' };
  const n = record(networking);
  if (n['type'] === 'unrestricted') return { type: 'unrestricted' };
  const hosts = Array.isArray(n['allowed_hosts']) ? n['allowed_hosts'].filter((h): h is string => typeof h === 'string') : [];
  return {
    type: 'limited',
    allowedHosts: n['type'] === 'limited' ? hosts.map(normalizeHost) : [],
    allowPackageManagers: n['type'] === 'limited' && n['allow_package_managers'] === true,
    allowMcpServers: n['type'] === 'limited' && n['allow_mcp_servers'] === true,
  };
}

/** The hosts of an agent's `mcp_servers` (`[{type: 'url', url}]`); entries without a URL are skipped. */
export function mcpHostsFrom(agentConfig: unknown): string[] {
  const servers = record(agentConfig)['mcp_servers'];
  if (!Array.isArray(servers)) return [];
  const hosts: string[] = [];
  for (const server of servers) {
    const url = record(server)['url'];
    if (typeof url !== 'string') continue;
    try {
      hosts.push(normalizeHost(new URL(url).hostname));
    } catch {
      // Not a URL: nothing to allow.
    }
  }
  return hosts;
}

export function egressPolicyFrom(environmentId: string, environmentConfig: unknown, agentConfig: unknown): EgressPolicy {
  return { environmentId, network: networkOf(environmentConfig), networking: networkingFrom(environmentConfig), mcpHosts: mcpHostsFrom(agentConfig) };
}

/** The setting that would let a refused host through, for the message the sandbox sees. */
export type AllowingSetting = 'config.network' | 'config.networking.allowed_hosts' | 'config.networking.allow_package_managers' | 'config.networking.allow_mcp_servers';

export type HostDecision =
  | Readonly<{ allowed: true; rule: 'unrestricted' | 'allowed_hosts' | 'package_managers' | 'mcp_servers' }>
  | Readonly<{ allowed: false; reason: 'network_none' | 'host_not_allowed' | 'invalid_target'; setting: AllowingSetting | null }>;

/**
 * Whether the environment lets its sandboxes reach `host` (normalized). This is the policy half;
 * the egress separately refuses every address of the machine and of private networks.
 */
export function decideHost(policy: EgressPolicy, host: string): HostDecision {
  if (!isHostName(host) && !isIpLiteral(host)) return { allowed: false, reason: 'invalid_target', setting: null };
  if (policy.network === 'none') return { allowed: false, reason: 'network_none', setting: 'config.network' };
  const { networking } = policy;
  if (networking.type === 'unrestricted') return { allowed: true, rule: 'unrestricted' };
  if (networking.allowedHosts.some((pattern) => hostMatches(pattern, host))) return { allowed: true, rule: 'allowed_hosts' };
  if (isPackageRegistryHost(host)) {
    return networking.allowPackageManagers
      ? { allowed: true, rule: 'package_managers' }
      : { allowed: false, reason: 'host_not_allowed', setting: 'config.networking.allow_package_managers' };
  }
  if (policy.mcpHosts.includes(host)) {
    return networking.allowMcpServers ? { allowed: true, rule: 'mcp_servers' } : { allowed: false, reason: 'host_not_allowed', setting: 'config.networking.allow_mcp_servers' };
  }
  return { allowed: false, reason: 'host_not_allowed', setting: 'config.networking.allowed_hosts' };
}
