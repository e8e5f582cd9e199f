import { parseAbsoluteTarget, parseAuthority, parseTunnelledTarget } from './targets';

describe('request targets', () => {
  it('reads CONNECT authorities', () => {
    expect(parseAuthority('Example.com:443')).toEqual({ host: 'example.com', port: 443 });
    expect(parseAuthority('[2001:db8::1]:8443')).toEqual({ host: '2001:db8::1', port: 8443 });
    for (const bad of ['example.com', 'example.com:0', 'example.com:70000', ':443', 'a:b:443', 'example.com:44x', '[::1]']) expect(parseAuthority(bad)).toBeNull();
  });

  it('reads absolute-form http targets, and only those', () => {
    expect(parseAbsoluteTarget('http://Example.com/a?b=1')).toEqual({ protocol: 'http:', host: 'example.com', port: 80, pathAndQuery: '/a?b=1' });
    expect(parseAbsoluteTarget('http://127.1:8080/')).toEqual({ protocol: 'http:', host: '127.0.0.1', port: 8080, pathAndQuery: '/' });
    for (const bad of ['/v1/messages', 'https://example.com/', 'ftp://x/', 'http://user:pw@example.com/', 'http://[zz]/']) expect(parseAbsoluteTarget(bad)).toBeNull();
  });

  it('reads origin-form requests inside a terminated tunnel as the tunnel\'s destination, dot segments resolved', () => {
    const tunnel = { host: 'mcp.example.com', port: 443 };
    expect(parseTunnelledTarget(tunnel, '/mcp?x=1')).toEqual({ protocol: 'https:', host: 'mcp.example.com', port: 443, pathAndQuery: '/mcp?x=1' });
    expect(parseTunnelledTarget(tunnel, '/mcp/../admin')).toEqual({ protocol: 'https:', host: 'mcp.example.com', port: 443, pathAndQuery: '/admin' });
    for (const bad of ['//evil.test/mcp', 'https://evil.test/mcp', 'http://mcp.example.com/mcp', '*', 'mcp', '']) expect([bad, parseTunnelledTarget(tunnel, bad)]).toEqual([bad, null]);
  });
});
