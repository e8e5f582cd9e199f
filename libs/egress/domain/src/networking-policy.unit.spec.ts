import { describeDenial } from './denial';
import { decideHost, egressPolicyFrom, networkingFrom } from './networking-policy';

const limited = (extra: Record<string, unknown> = {}) => ({ networking: { type: 'limited', allowed_hosts: ['api.github.com', '*.example.org'], ...extra } });
const agent = { mcp_servers: [{ type: 'url', name: 'docs', url: 'https://mcp.docs.dev/sse' }, { type: 'url', name: 'broken', url: 'not a url' }] };

describe('the networking policy of an environment', () => {
  it('is unrestricted when the environment says nothing (the Managed Agents default)', () => {
    expect(networkingFrom({})).toEqual({ type: 'unrestricted' });
    expect(decideHost(egressPolicyFrom('env_1', {}, {}), 'anything.com')).toEqual({ allowed: true, rule: 'unrestricted' });
  });

  it('lets a limited environment reach its allowed hosts and nothing else', () => {
    const policy = egressPolicyFrom('env_1', limited(), agent);
    expect(decideHost(policy, 'api.github.com')).toEqual({ allowed: true, rule: 'allowed_hosts' });
    expect(decideHost(policy, 'www.example.org')).toEqual({ allowed: true, rule: 'allowed_hosts' });
    expect(decideHost(policy, 'github.com')).toEqual({ allowed: false, reason: 'host_not_allowed', setting: 'config.networking.allowed_hosts' });
  });

  it('opens the package registries only with allow_package_managers', () => {
    expect(decideHost(egressPolicyFrom('env_1', limited(), agent), 'registry.npmjs.org')).toEqual({
      allowed: false,
      reason: 'host_not_allowed',
      setting: 'config.networking.allow_package_managers',
    });
    expect(decideHost(egressPolicyFrom('env_1', limited({ allow_package_managers: true }), agent), 'pypi.org')).toEqual({ allowed: true, rule: 'package_managers' });
  });

  it("opens the agent's MCP server hosts only with allow_mcp_servers", () => {
    const policy = egressPolicyFrom('env_1', limited(), agent);
    expect(policy.mcpHosts).toEqual(['mcp.docs.dev']);
    expect(decideHost(policy, 'mcp.docs.dev')).toMatchObject({ allowed: false, setting: 'config.networking.allow_mcp_servers' });
    expect(decideHost(egressPolicyFrom('env_1', limited({ allow_mcp_servers: true }), agent), 'mcp.docs.dev')).toEqual({ allowed: true, rule: 'mcp_servers' });
  });

  it('refuses every host with network none, whatever networking says', () => {
    expect(decideHost(egressPolicyFrom('env_1', { network: 'none' }, {}), 'api.github.com')).toEqual({ allowed: false, reason: 'network_none', setting: 'config.network' });
  });

  it('fails closed on a stored value it cannot read', () => {
    expect(decideHost(egressPolicyFrom('env_1', { networking: { type: 'weird' } }, {}), 'a.com')).toMatchObject({ allowed: false });
    expect(decideHost(egressPolicyFrom('env_1', { network: 'carrier-pigeon' }, {}), 'a.com')).toMatchObject({ allowed: false, reason: 'network_none' });
  });

  it('refuses a target that is neither a host name nor an address', () => {
    expect(decideHost(egressPolicyFrom('env_1', {}, {}), 'a b')).toEqual({ allowed: false, reason: 'invalid_target', setting: null });
  });
});

describe('the refusal the sandbox reads', () => {
  it('names the host, the environment and the setting that would allow it', () => {
    const denial = describeDenial({ host: 'github.com', port: 443, environmentId: 'env_1', reason: 'host_not_allowed', setting: 'config.networking.allowed_hosts' });
    expect(denial.message).toBe(
      'Berth egress refused github.com:443: environment env_1 has limited networking and "github.com" is not in config.networking.allowed_hosts. Add it there (or a wildcard such as "*.github.com") to allow it.',
    );
    expect(describeDenial({ host: 'pypi.org', port: 443, environmentId: 'env_1', reason: 'host_not_allowed', setting: 'config.networking.allow_package_managers' }).message).toContain(
      'Set config.networking.allow_package_managers to true',
    );
    expect(describeDenial({ host: 'a.com', port: 80, environmentId: 'env_1', reason: 'network_none', setting: 'config.network' }).message).toContain('config.network "none"');
  });

  it('says that no setting opens the platform, and what the name resolved to', () => {
    const denial = describeDenial({ host: 'rebind.example', port: 4222, environmentId: 'env_1', reason: 'platform_address', setting: null, address: { ip: '127.0.0.1', range: 'loopback' } });
    expect(denial.message).toBe(
      'Berth egress refused rebind.example:4222 (it resolves to 127.0.0.1, loopback): sandboxes never reach this machine, the platform or private networks, whatever the environment allows.',
    );
    expect(denial.setting).toBeNull();
    expect(describeDenial({ host: '::1', port: 80, environmentId: 'env_1', reason: 'platform_address', setting: null, address: { ip: '::1', range: 'loopback' } }).message).toBe(
      'Berth egress refused [::1]:80 (loopback): sandboxes never reach this machine, the platform or private networks, whatever the environment allows.',
    );
  });
});
