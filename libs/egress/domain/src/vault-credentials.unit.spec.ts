import { parseAbsoluteTarget, type AbsoluteTarget } from './targets';
import { credentialFor, withCredential, type BoundCredential } from './vault-credentials';

const target = (url: string): AbsoluteTarget => {
  const t = parseAbsoluteTarget(url);
  if (t === null) throw new Error(`not a target: ${url}`);
  return t;
};
const cred = (credentialId: string, mcpServerUrl: string): BoundCredential => ({ credentialId, mcpServerUrl, token: `tok-${credentialId}` });
const idFor = (credentials: readonly BoundCredential[], url: string) => credentialFor(credentials, target(url))?.credentialId ?? null;

describe('vault credentials for a plain-HTTP request', () => {
  const docs = cred('docs', 'http://mcp.docs.test/mcp');

  it('covers the MCP server URL and the paths under it, with any query', () => {
    expect(idFor([docs], 'http://mcp.docs.test/mcp')).toBe('docs');
    expect(idFor([docs], 'http://MCP.docs.test:80/mcp/messages?session=1')).toBe('docs');
    expect(idFor([docs], 'http://mcp.docs.test/mcp?x=1')).toBe('docs');
  });

  it('never covers another host, port, or a path beside the server\'s (dot segments resolved first)', () => {
    for (const url of [
      'http://other.test/mcp',
      'http://mcp.docs.test.evil.test/mcp',
      'http://evil.test/mcp.docs.test/mcp',
      'http://mcp.docs.test:8080/mcp',
      'http://mcp.docs.test/mcpx',
      'http://mcp.docs.test/admin',
      'http://mcp.docs.test/mcp/../admin',
      'http://mcp.docs.test/',
    ]) {
      expect([url, idFor([docs], url)]).toEqual([url, null]);
    }
  });

  it('injects nothing for an https:// server: its requests go through a tunnel the egress does not open', () => {
    expect(idFor([cred('tls', 'https://mcp.docs.test/mcp')], 'http://mcp.docs.test/mcp')).toBeNull();
  });

  it('prefers the longest covering path, then the first in vault order', () => {
    const root = cred('root', 'http://mcp.docs.test/');
    const deep = cred('deep', 'http://mcp.docs.test/mcp/v2/');
    expect(idFor([root, docs, deep], 'http://mcp.docs.test/mcp/v2/x')).toBe('deep');
    expect(idFor([root, docs, deep], 'http://mcp.docs.test/mcp/v1')).toBe('docs');
    expect(idFor([root, docs, deep], 'http://mcp.docs.test/other')).toBe('root');
    expect(idFor([cred('first', 'http://mcp.docs.test/mcp'), cred('second', 'http://mcp.docs.test/mcp')], 'http://mcp.docs.test/mcp')).toBe('first');
    expect(idFor([], 'http://mcp.docs.test/mcp')).toBeNull();
  });

  it('sets Authorization: Bearer, replacing what the sandbox sent', () => {
    expect(withCredential({ authorization: 'Bearer forged', accept: 'application/json' }, docs)).toEqual({ authorization: 'Bearer tok-docs', accept: 'application/json' });
  });
});
