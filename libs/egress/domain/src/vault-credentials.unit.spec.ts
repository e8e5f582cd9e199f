import { parseAbsoluteTarget, parseTunnelledTarget, type AbsoluteTarget } from './targets';
import { credentialFor, expiredCredentialDenial, terminatesTls, withCredential, type BoundCredential } from './vault-credentials';

const target = (url: string): AbsoluteTarget => {
  const t = parseAbsoluteTarget(url);
  if (t === null) throw new Error(`not a target: ${url}`);
  return t;
};
const cred = (credentialId: string, mcpServerUrl: string, expiresAt: string | null = null, refreshes = false): BoundCredential => ({
  credentialId,
  vaultId: 'vlt_1',
  mcpServerUrl,
  token: `tok-${credentialId}`,
  expiresAt,
  refreshes,
});
const tunnelled = (host: string, port: number, path: string): AbsoluteTarget => {
  const t = parseTunnelledTarget({ host, port }, path);
  if (t === null) throw new Error(`not a path: ${path}`);
  return t;
};
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

  it('never gives an https:// credential to plain HTTP, nor an http:// one inside a TLS tunnel', () => {
    expect(idFor([cred('tls', 'https://mcp.docs.test/mcp')], 'http://mcp.docs.test/mcp')).toBeNull();
    expect(idFor([cred('tls', 'https://mcp.docs.test:80/mcp')], 'http://mcp.docs.test/mcp')).toBeNull();
    expect(credentialFor([docs], tunnelled('mcp.docs.test', 443, '/mcp'))).toBeNull();
    expect(credentialFor([cred('plain443', 'http://mcp.docs.test:443/mcp')], tunnelled('mcp.docs.test', 443, '/mcp'))).toBeNull();
  });

  it('picks an https:// credential for requests inside the terminated tunnel to its host and port, under its path only', () => {
    const tls = cred('tls', 'https://mcp.docs.test/mcp');
    const alt = cred('alt', 'https://mcp.docs.test:8443/');
    const id = (host: string, port: number, path: string) => credentialFor([tls, alt], tunnelled(host, port, path))?.credentialId ?? null;
    expect(id('mcp.docs.test', 443, '/mcp')).toBe('tls');
    expect(id('mcp.docs.test', 443, '/mcp/sse?x=1')).toBe('tls');
    expect(id('mcp.docs.test', 443, '/admin')).toBeNull();
    expect(id('mcp.docs.test', 443, '/mcp/../admin')).toBeNull();
    expect(id('mcp.docs.test', 8443, '/anything')).toBe('alt');
    expect(id('other.test', 443, '/mcp')).toBeNull();
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

describe('which CONNECT tunnels the egress terminates', () => {
  const creds = [cred('plain', 'http://plain.test/mcp'), cred('tls', 'https://MCP.docs.test/mcp'), cred('alt', 'https://alt.test:8443/x'), cred('env', 'not a url')];

  it('exactly the host and port of an https:// credential of the session', () => {
    expect(terminatesTls(creds, { host: 'mcp.docs.test', port: 443 })).toBe(true);
    expect(terminatesTls(creds, { host: 'alt.test', port: 8443 })).toBe(true);
  });

  it('no other tunnel: another host or port, an http:// credential\'s host, a sibling or parent domain, or a session without credentials', () => {
    for (const [host, port] of [['mcp.docs.test', 8443], ['alt.test', 443], ['plain.test', 443], ['plain.test', 80], ['docs.test', 443], ['x.mcp.docs.test', 443], ['api.anthropic.com', 443]] as const) {
      expect([host, port, terminatesTls(creds, { host, port })]).toEqual([host, port, false]);
    }
    expect(terminatesTls([], { host: 'mcp.docs.test', port: 443 })).toBe(false);
  });
});

describe('an mcp_oauth token past its expires_at', () => {
  const at = new Date('2026-05-01T12:00:00Z');
  const target = { host: 'mcp.docs.test', port: 443 };

  it('is refused from its expiry on, saying which credential to update; before it, and without an expiry, it is not', () => {
    expect(expiredCredentialDenial(cred('docs', 'https://mcp.docs.test/mcp', '2026-05-01T12:00:01Z'), target, at)).toBeNull();
    expect(expiredCredentialDenial(cred('docs', 'https://mcp.docs.test/mcp'), target, at)).toBeNull();
    expect(expiredCredentialDenial(cred('docs', 'https://mcp.docs.test/mcp', '2026-05-01T12:00:00Z'), target, at)).toEqual({
      host: 'mcp.docs.test',
      port: 443,
      reason: 'vault_credential_expired',
      setting: null,
      message:
        'Berth egress did not send the request to mcp.docs.test:443: the access token of vault credential docs (vault vlt_1) for https://mcp.docs.test/mcp expired at 2026-05-01T12:00:00Z, ' +
        'and the credential has no refresh configuration. Update it with a new access_token and expires_at (POST /v1/vaults/vlt_1/credentials/docs); the session uses it within a second.',
    });
  });

  it('for a credential Berth refreshes, points at why its refresh failed', () => {
    expect(expiredCredentialDenial(cred('docs', 'https://mcp.docs.test/mcp', '2026-05-01T12:00:00Z', true), target, at)?.message).toBe(
      'Berth egress did not send the request to mcp.docs.test:443: the access token of vault credential docs (vault vlt_1) for https://mcp.docs.test/mcp expired at 2026-05-01T12:00:00Z, ' +
        'and Berth could not refresh it: GET /v1/vaults/vlt_1/credentials/docs says why (berth.refresh). Update the credential with a new refresh_token, or a new access_token and expires_at ' +
        '(POST /v1/vaults/vlt_1/credentials/docs); the session uses it within a second.',
    );
  });

  it('never carries the token into its words', () => {
    const denial = expiredCredentialDenial(cred('docs', 'http://mcp.docs.test/mcp', '2020-01-01T00:00:00Z'), { host: 'mcp.docs.test', port: 80 }, at);
    expect(JSON.stringify(denial)).not.toContain('tok-docs');
  });
});
