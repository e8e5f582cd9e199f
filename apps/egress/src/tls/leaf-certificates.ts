import { createSecureContext, type SecureContext } from 'node:tls';
import { issueServerCertificate, type CertificateAuthority } from '@berth/secrets';

/** Hosts whose certificates are kept at once (a session has at most 8 vaults of 64 credentials). */
const MAX_CACHED = 1_024;
const DAY_MS = 24 * 3600 * 1000;

export type LeafCertificatesDeps = Readonly<{
  ca: CertificateAuthority;
  now?: () => number;
  /** Tests: stands in for `openssl` to count or fail issues. */
  issue?: typeof issueServerCertificate;
}>;

/**
 * The certificates the egress shows a sandbox for the hosts it terminates TLS for: one per host,
 * signed by the install's CA, valid one day and reissued after half of it, so a certificate a
 * sandbox saw is useless a day later. Concurrent asks for one host share one issue; a failed issue
 * is not kept (the next connection tries again).
 */
export class LeafCertificates {
  private readonly cache = new Map<string, { until: number; context: Promise<SecureContext> }>();
  private readonly now: () => number;
  private readonly issue: typeof issueServerCertificate;

  constructor(private readonly deps: LeafCertificatesDeps) {
    this.now = deps.now ?? Date.now;
    this.issue = deps.issue ?? issueServerCertificate;
  }

  contextFor(host: string): Promise<SecureContext> {
    const cached = this.cache.get(host);
    if (cached !== undefined && this.now() < cached.until) return cached.context;
    if (this.cache.size >= MAX_CACHED) this.cache.clear();
    const context = this.issue(this.deps.ca, host, 1).then(({ keyPem, certPem }) => createSecureContext({ key: keyPem, cert: certPem, minVersion: 'TLSv1.2' }));
    const entry = { until: this.now() + DAY_MS / 2, context };
    this.cache.set(host, entry);
    context.catch(() => {
      if (this.cache.get(host) === entry) this.cache.delete(host);
    });
    return context;
  }
}
