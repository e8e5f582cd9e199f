/**
 * An environment's `config.network` (Berth's field beside Managed Agents' `networking`).
 * `egress` (the default): the sandbox has no network interface and its only way out is Berth's
 * egress proxy, which applies `networking`. `none`: the same sandbox, but the egress lets it reach
 * its model endpoint and nothing else. `host`: the host's network with no egress in the way
 * (only when the operator allows it; unsafe).
 */
export type SandboxNetwork = 'egress' | 'none' | 'host';
export const SANDBOX_NETWORKS: readonly SandboxNetwork[] = ['egress', 'none', 'host'];
export const DEFAULT_SANDBOX_NETWORK: SandboxNetwork = 'egress';

/** Accepted (and stored as the default) by earlier versions; a bridged sandbox could reach the host directly, so it now means `egress`. */
const LEGACY_BRIDGE = 'bridge';

/** What the API accepts for `config.network`. */
export const SANDBOX_NETWORK_INPUTS: readonly string[] = [...SANDBOX_NETWORKS, LEGACY_BRIDGE];

/** A stored or given `config.network` value as the mode it means; null when it is none of them. */
export function sandboxNetworkOf(value: unknown): SandboxNetwork | null {
  if (value === LEGACY_BRIDGE) return 'egress';
  return typeof value === 'string' && (SANDBOX_NETWORKS as readonly string[]).includes(value) ? (value as SandboxNetwork) : null;
}
