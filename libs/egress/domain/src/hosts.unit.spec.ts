import { isHostName, isHostPattern, isIpLiteral, normalizeHost } from '@berth/contracts';
import { hostMatches } from './hosts';

describe('host names and allowed_hosts patterns', () => {
  it('normalizes case, IPv6 brackets and a trailing dot', () => {
    expect(normalizeHost(' API.GitHub.com. ')).toBe('api.github.com');
    expect(normalizeHost('[::1]')).toBe('::1');
  });

  it('accepts DNS names and refuses what a resolver would read as an address or nothing at all', () => {
    expect(isHostName('api.github.com')).toBe(true);
    expect(isHostName('_acme.example.com')).toBe(true);
    expect(isHostName('localhost')).toBe(true);
    for (const bad of ['', '127.1', '10.0.0.0x1', 'a..b', '-a.com', 'a-.com', 'a b.com', 'x'.repeat(64) + '.com', 'host:80', 'a/b']) {
      expect(isHostName(bad)).toBe(false);
    }
  });

  it('reads every spelling a resolver accepts as an address as an IP literal', () => {
    expect(isIpLiteral('127.1')).toBe(true);
    expect(isIpLiteral('example.com')).toBe(false);
  });

  it('matches an exact host, and a wildcard only below its domain', () => {
    expect(hostMatches('api.github.com', 'api.github.com')).toBe(true);
    expect(hostMatches('API.github.com', 'api.github.com')).toBe(true);
    expect(hostMatches('github.com', 'api.github.com')).toBe(false);
    expect(hostMatches('*.github.com', 'api.github.com')).toBe(true);
    expect(hostMatches('*.github.com', 'a.b.github.com')).toBe(true);
    expect(hostMatches('*.github.com', 'github.com')).toBe(false);
    expect(hostMatches('*.github.com', 'evilgithub.com')).toBe(false);
  });

  it('validates patterns', () => {
    expect(['example.com', '*.example.com', '203.0.113.7', '2001:db8::1'].every(isHostPattern)).toBe(true);
    expect(['*', '*.', 'a.*.com', 'http://example.com', 'example.com/x', ''].some(isHostPattern)).toBe(false);
  });
});
