import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { rootCertificates } from 'node:tls';
import { EGRESS_CA_BUNDLE_FILE, EGRESS_CA_FILE } from '@berth/sandbox-domain';

/** The egress CA's certificate as a sandbox gets it: alone, and after the public roots (Node's Mozilla set). */
export type SandboxTrust = Readonly<{ caPem: string; bundlePem: string }>;

export const sandboxTrustOf = (caPem: string): SandboxTrust => ({ caPem, bundlePem: `${[...rootCertificates, caPem.trim()].join('\n')}\n` });

/** The files a sandbox finds at `/run/berth`: by name, as written beside a socket or put in a pod's ConfigMap. */
export const sandboxTrustFiles = (trust: SandboxTrust): Readonly<Record<string, string>> => ({ [EGRESS_CA_FILE]: trust.caPem, [EGRESS_CA_BUNDLE_FILE]: trust.bundlePem });

/**
 * Writes the CA certificate and the bundle into a sandbox's socket directory (mounted read-only at
 * `/run/berth`), before the egress listens there: a sandbox can reach nothing before its socket
 * exists, so every client that can connect finds them. Certificates only; the key stays in the egress.
 */
export async function writeSandboxTrust(socketDir: string, trust: SandboxTrust): Promise<void> {
  for (const [file, pem] of Object.entries(sandboxTrustFiles(trust))) {
    const path = join(socketDir, file);
    const temp = `${path}.${process.pid}.tmp`;
    await writeFile(temp, pem, { mode: 0o644 });
    await rename(temp, path);
  }
}
