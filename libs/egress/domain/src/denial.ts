import type { AllowingSetting } from './networking-policy';

/** Why the egress refused a destination (the `reason` of `berth.egress_denied`). */
export type DenialReason = PolicyDenialReason | 'vault_credential_expired';
/** The refusals of the environment's networking policy and the platform rule (`describeDenial` words them). */
type PolicyDenialReason = 'network_none' | 'host_not_allowed' | 'platform_address' | 'invalid_target';

export type EgressDenial = Readonly<{
  host: string;
  port: number;
  reason: DenialReason;
  /** The environment setting that would allow it; null when none can (platform addresses). */
  setting: AllowingSetting | null;
  message: string;
}>;

export type DenialInput = Readonly<{
  host: string;
  port: number;
  environmentId: string;
  reason: PolicyDenialReason;
  setting: AllowingSetting | null;
  /** For `platform_address`: the address it is or resolves to, and its range (`loopback`, `private`, …). */
  address?: Readonly<{ ip: string; range: string }>;
}>;

/**
 * The refusal as the sandbox sees it (the body of the 403, and the event's message): what was
 * refused, why, and which setting of which environment would allow it.
 */
export function describeDenial(input: DenialInput): EgressDenial {
  const { host, port, environmentId: env, reason, setting } = input;
  // An IPv6 literal is bracketed, as in a URL, so its port reads apart from its groups.
  const head = `Berth egress refused ${host.includes(':') ? `[${host}]` : host}:${port}`;
  let message: string;
  switch (reason) {
    case 'network_none':
      message = `${head}: environment ${env} has config.network "none", so its sandboxes reach only their model endpoint. Set config.network to "egress" (the default) to let config.networking decide.`;
      break;
    case 'platform_address': {
      const where = input.address === undefined ? '' : input.address.ip === host ? ` (${input.address.range})` : ` (it resolves to ${input.address.ip}, ${input.address.range})`;
      message = `${head}${where}: sandboxes never reach this machine, the platform or private networks, whatever the environment allows.`;
      break;
    }
    case 'invalid_target':
      message = `${head}: not a host name or address the egress can check.`;
      break;
    case 'host_not_allowed':
      message =
        setting === 'config.networking.allow_package_managers'
          ? `${head}: it is a package registry and environment ${env} has limited networking without allow_package_managers. Set config.networking.allow_package_managers to true, or add "${host}" to config.networking.allowed_hosts.`
          : setting === 'config.networking.allow_mcp_servers'
            ? `${head}: it is one of the agent's MCP servers and environment ${env} has limited networking without allow_mcp_servers. Set config.networking.allow_mcp_servers to true, or add "${host}" to config.networking.allowed_hosts.`
            : `${head}: environment ${env} has limited networking and "${host}" is not in config.networking.allowed_hosts. Add it there (or a wildcard such as "*.${parentDomain(host)}") to allow it.`;
      break;
  }
  return { host, port, reason, setting, message };
}

function parentDomain(host: string): string {
  const labels = host.split('.');
  return labels.length > 2 ? labels.slice(1).join('.') : host;
}
