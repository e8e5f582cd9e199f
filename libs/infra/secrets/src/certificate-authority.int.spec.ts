import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { connect, createServer } from 'node:tls';
import { createCertificateAuthority, issueServerCertificate, loadCertificateAuthority, loadOrCreateCertificateAuthority } from './certificate-authority';

describe('certificate authority (system openssl)', () => {
  const dir = mkdtempSync('/tmp/berth-ca-');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('makes a CA once, key 0600, that may sign server certificates only, and loads the same one again', async () => {
    const ca = await loadOrCreateCertificateAuthority(join(dir, 'a'), 'Berth egress CA test');
    const cert = new X509Certificate(ca.certPem);
    expect(cert.ca).toBe(true);
    expect(cert.subject).toBe('CN=Berth egress CA test');
    expect(statSync(ca.keyFile).mode & 0o777).toBe(0o600);
    expect(cert.toLegacyObject().ext_key_usage).toBeUndefined();
    expect((await loadOrCreateCertificateAuthority(join(dir, 'a'), 'another')).certPem).toBe(ca.certPem);
    expect(await loadCertificateAuthority(join(dir, 'none'))).toBeNull();
  });

  it('refuses a CA directory whose key is not its certificate\'s', async () => {
    const a = await createCertificateAuthority(join(dir, 'b'), 'b');
    const c = await createCertificateAuthority(join(dir, 'c'), 'c');
    writeFileSync(a.keyFile, c.keyPem);
    await expect(loadCertificateAuthority(join(dir, 'b'))).rejects.toThrow(/is not the key of/);
  });

  it('issues a short-lived leaf for exactly one host, signed by the CA, not itself a CA', async () => {
    const ca = await loadOrCreateCertificateAuthority(join(dir, 'a'), 'Berth egress CA test');
    const leaf = await issueServerCertificate(ca, 'MCP.Example.test');
    const cert = new X509Certificate(leaf.certPem);
    expect(cert.verify(new X509Certificate(ca.certPem).publicKey)).toBe(true);
    expect(cert.ca).toBe(false);
    expect(cert.subjectAltName).toBe('DNS:mcp.example.test');
    expect(cert.checkHost('mcp.example.test')).toBe('mcp.example.test');
    expect(cert.checkHost('other.example.test')).toBeUndefined();
    expect(cert.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']);
    const lifetime = Date.parse(cert.validTo) - Date.parse(cert.validFrom);
    expect(lifetime).toBe(24 * 3600 * 1000);
    expect(new X509Certificate((await issueServerCertificate(ca, '192.0.2.7')).certPem).subjectAltName).toBe('IP Address:192.0.2.7');
  });

  it('refuses a host that is not a name or an address (nothing reaches the openssl config)', async () => {
    const ca = await loadOrCreateCertificateAuthority(join(dir, 'a'), 'Berth egress CA test');
    for (const host of ['a,DNS:evil.test', 'a\nb', '*.example.test', '', 'x'.repeat(254)]) {
      await expect(issueServerCertificate(ca, host)).rejects.toThrow(/not a host name or IP address/);
    }
  });

  it('serves TLS that a client trusting only the CA accepts for the host, and refuses for another name', async () => {
    const ca = await loadOrCreateCertificateAuthority(join(dir, 'a'), 'Berth egress CA test');
    const leaf = await issueServerCertificate(ca, 'mcp.example.test');
    const server = createServer({ key: leaf.keyPem, cert: leaf.certPem }, (socket) => socket.end('hello'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const handshake = (servername: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect({ host: '127.0.0.1', port, servername, ca: [ca.certPem] }, () => socket.once('data', (d) => resolve(d.toString())));
        socket.once('error', reject);
      });
    try {
      expect(await handshake('mcp.example.test')).toBe('hello');
      await expect(handshake('other.example.test')).rejects.toThrow(/altnames/);
    } finally {
      server.close();
    }
  });
});
