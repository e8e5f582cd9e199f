import { imageBuildPolicy } from '@berth/egress-domain';
import { Destinations } from './destinations';
import type { PlatformAddresses } from './platform-addresses';

// DNS and this machine's addresses, as the test says they are: nothing here connects anywhere.
const answers: Record<string, string[]> = {
  'mirror.corp.test': ['10.20.30.40'],
  'mirror6.corp.test': ['fd00::5'],
  'sneaky.corp.test': ['127.0.0.1'],
  'metadata.corp.test': ['169.254.169.254'],
  'self.corp.test': ['10.0.0.5'],
};
const thisMachine = new Set(['10.0.0.5']);
const destinations = new Destinations({
  platform: { has: (address: string) => thisMachine.has(address) } as unknown as PlatformAddresses,
  upstream: null,
  connectTimeoutMs: 1_000,
  resolve: async (host) => answers[host] ?? [],
});
const policy = imageBuildPolicy({ environmentId: 'env_m', ecosystems: ['npm'], allowedHosts: Object.keys(answers).concat('10.20.30.40') });

describe('a trusted mirror on an internal network (BERTH_EGRESS_BUILD_MIRROR_HOSTS)', () => {
  it('is reached at its private address by an image build the operator trusts it for, and refused otherwise', async () => {
    expect(await destinations.check(policy, 'mirror.corp.test', 80, { privateNetworks: true })).toEqual({ allowed: true, route: { kind: 'direct', address: '10.20.30.40' } });
    expect(await destinations.check(policy, 'mirror6.corp.test', 443, { privateNetworks: true })).toMatchObject({ allowed: true });
    expect(await destinations.check(policy, '10.20.30.40', 80, { privateNetworks: true })).toMatchObject({ allowed: true });
    expect(await destinations.check(policy, 'mirror.corp.test', 80)).toMatchObject({ allowed: false, denial: { reason: 'platform_address', address: { ip: '10.20.30.40', range: 'private' } } });
  });

  it('never opens loopback, link-local (cloud metadata) or this machine\'s own addresses', async () => {
    const trusted = { privateNetworks: true };
    expect(await destinations.check(policy, 'sneaky.corp.test', 80, trusted)).toMatchObject({ allowed: false, denial: { address: { ip: '127.0.0.1', range: 'loopback' } } });
    expect(await destinations.check(policy, 'metadata.corp.test', 80, trusted)).toMatchObject({ allowed: false, denial: { address: { range: 'linkLocal' } } });
    expect(await destinations.check(policy, 'self.corp.test', 80, trusted)).toMatchObject({ allowed: false, denial: { address: { ip: '10.0.0.5', range: 'an address of this machine or a platform service' } } });
  });
});
