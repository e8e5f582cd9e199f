import { canonicalAddress, classifyAddress, isLocalName, isPublicAddress } from './addresses';

describe('addresses the egress may reach', () => {
  it.each(['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '[2001:4860:4860::8888]'])('%s is public', (ip) => {
    expect(isPublicAddress(ip)).toBe(true);
  });

  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.1', 'loopback'],
    ['0x7f000001', 'loopback'],
    ['2130706433', 'loopback'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['10.1.2.3', 'private'],
    ['172.17.0.1', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'linkLocal'],
    ['fe80::1', 'linkLocal'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['fd00::1', 'uniqueLocal'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['192.0.2.1', 'reserved'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:169.254.169.254', 'linkLocal'],
    ['64:ff9b::7f00:1', 'rfc6052'],
    ['2002:7f00:1::1', '6to4'],
  ])('%s is %s, never reached', (ip, range) => {
    expect(classifyAddress(ip)).toBe(range);
    expect(isPublicAddress(ip)).toBe(false);
  });

  it('reads every spelling a resolver accepts as an address, and canonicalises it', () => {
    expect(canonicalAddress('127.1')).toBe('127.0.0.1');
    expect(canonicalAddress('::ffff:7f00:1')).toBe('127.0.0.1');
  });

  it('treats garbage as not public', () => {
    expect(classifyAddress('not-an-ip')).toBe('invalid');
    expect(isPublicAddress('')).toBe(false);
  });

  it('knows the names that always mean this machine', () => {
    expect(['localhost', 'db.localhost', 'printer.local', 'metadata.google.internal'].every(isLocalName)).toBe(true);
    expect(isLocalName('example.com')).toBe(false);
  });
});
