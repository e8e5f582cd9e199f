import { execFile } from 'node:child_process';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isIP } from 'node:net';

/**
 * X.509 issuing with the system `openssl` (3.0 or later: `req -x509 -CA`). Node's crypto makes and
 * checks keys and certificates but cannot issue one; `openssl` is on every Debian image Berth
 * builds and needs no new dependency. Keys are EC P-256; nothing touches the disk but the CA files
 * a caller asks for (a leaf's key comes back on stdout).
 */

/** A key and its certificate, PEM. */
export type KeyAndCertificate = Readonly<{ keyPem: string; certPem: string }>;

/** A CA on disk: `keyFile` is what `openssl` signs with; the PEMs are kept for building TLS contexts. */
export type CertificateAuthority = KeyAndCertificate & Readonly<{ keyFile: string; certFile: string }>;

const CA_KEY_FILE = 'ca-key.pem';
const CA_CERT_FILE = 'ca.pem';
const HOST_NAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

/** Runs `openssl` with `config` as its configuration file (in a private temporary directory: a piped stdin cannot be opened as a file). */
async function openssl(args: readonly string[], config: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'berth-openssl-'));
  try {
    const file = join(dir, 'openssl.cnf');
    await writeFile(file, config, { mode: 0o600 });
    return await new Promise((resolve, reject) => {
      execFile('openssl', [...args, '-config', file], { timeout: 15_000, maxBuffer: 1 << 20 }, (error, stdout, stderr) => {
        if (error) reject(new Error(`openssl ${args[0]} failed: ${stderr.trim().split('\n').slice(-2).join(' ') || error.message}`));
        else resolve(stdout);
      });
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const pemBlock = (text: string, label: string): string => {
  const match = new RegExp(`-----BEGIN ${label}-----[\\s\\S]+?-----END ${label}-----\\n?`).exec(text);
  if (match === null) throw new Error(`openssl printed no ${label}`);
  return match[0].endsWith('\n') ? match[0] : `${match[0]}\n`;
};

/** A new self-signed CA that may sign server certificates only (pathlen 0), written to `dir` (key 0600). */
export async function createCertificateAuthority(dir: string, commonName: string, days = 3650): Promise<CertificateAuthority> {
  if (!/^[A-Za-z0-9 ._-]{1,64}$/.test(commonName)) throw new Error(`a CA common name must be 1-64 letters, digits, spaces, . _ or -: ${JSON.stringify(commonName)}`);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const keyFile = join(dir, CA_KEY_FILE);
  const certFile = join(dir, CA_CERT_FILE);
  const temp = `.${process.pid}.${Date.now()}.tmp`;
  const config = [
    '[req]', 'distinguished_name = dn', 'prompt = no', 'x509_extensions = ca',
    '[dn]', `CN = ${commonName}`,
    '[ca]', 'basicConstraints = critical,CA:TRUE,pathlen:0', 'keyUsage = critical,keyCertSign,cRLSign', 'subjectKeyIdentifier = hash',
  ].join('\n');
  await openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', `${keyFile}${temp}`, '-out', `${certFile}${temp}`, '-days', String(days)], config);
  await chmod(`${keyFile}${temp}`, 0o600);
  // The certificate last: a directory with a certificate always has its key.
  await rename(`${keyFile}${temp}`, keyFile);
  await rename(`${certFile}${temp}`, certFile);
  const ca = await loadCertificateAuthority(dir);
  if (ca === null) throw new Error(`the CA written to ${dir} is not there`);
  return ca;
}

/** The CA in `dir`, or null when there is none yet. */
export async function loadCertificateAuthority(dir: string): Promise<CertificateAuthority | null> {
  const keyFile = join(dir, CA_KEY_FILE);
  const certFile = join(dir, CA_CERT_FILE);
  let certPem: string;
  try {
    certPem = await readFile(certFile, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  const keyPem = await readFile(keyFile, 'utf8');
  const cert = new X509Certificate(certPem);
  if (!cert.ca) throw new Error(`${certFile} is not a CA certificate`);
  if (!cert.checkPrivateKey(createPrivateKey(keyPem))) throw new Error(`${keyFile} is not the key of ${certFile}`);
  return { keyPem, certPem, keyFile, certFile };
}

/** The CA in `dir`, made on first use. */
export async function loadOrCreateCertificateAuthority(dir: string, commonName: string): Promise<CertificateAuthority> {
  return (await loadCertificateAuthority(dir)) ?? createCertificateAuthority(dir, commonName);
}

/**
 * A server certificate for `host` (a DNS name or an IP address) signed by `ca`, valid for `days`
 * from now: serverAuth only, not a CA, the host as its only subject alternative name.
 */
export async function issueServerCertificate(ca: CertificateAuthority, host: string, days = 1): Promise<KeyAndCertificate> {
  const name = host.toLowerCase();
  const san = isIP(name) !== 0 ? `IP:${name}` : HOST_NAME.test(name) ? `DNS:${name}` : null;
  if (san === null) throw new Error(`not a host name or IP address: ${JSON.stringify(host)}`);
  const config = [
    '[req]', 'distinguished_name = dn', 'prompt = no', 'x509_extensions = leaf',
    '[dn]', `CN = ${name.slice(0, 64)}`,
    '[leaf]', 'basicConstraints = critical,CA:FALSE', 'keyUsage = critical,digitalSignature', 'extendedKeyUsage = serverAuth', `subjectAltName = ${san}`, 'authorityKeyIdentifier = keyid',
  ].join('\n');
  const out = await openssl(
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', '-', '-out', '-', '-days', String(days), '-CA', ca.certFile, '-CAkey', ca.keyFile],
    config,
  );
  return { keyPem: pemBlock(out, 'PRIVATE KEY'), certPem: pemBlock(out, 'CERTIFICATE') };
}
