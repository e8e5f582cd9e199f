import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCertificateAuthority, issueServerCertificate, type KeyAndCertificate } from '@berth/secrets';

/**
 * A CA of a test's own, standing in for a public CA, with a server certificate for `host`: a
 * loopback HTTPS server the egress reaches as `host` presents it, and the egress trusts the CA
 * through `BERTH_EGRESS_UPSTREAM_CA_FILE` (`caFile`). Nothing of it is the egress's own CA.
 */
export class TestCertificates {
  private constructor(
    private readonly dir: string,
    readonly caPem: string,
    readonly caFile: string,
    readonly server: KeyAndCertificate,
  ) {}

  static async create(host: string): Promise<TestCertificates> {
    const dir = mkdtempSync(join(tmpdir(), 'berth-test-ca-'));
    const ca = await createCertificateAuthority(dir, 'Berth test upstream CA');
    const server = await issueServerCertificate(ca, host, 2);
    return new TestCertificates(dir, ca.certPem, ca.certFile, server);
  }

  /** A certificate for `host` from another CA nobody trusts (the egress must refuse it). */
  static async untrusted(host: string): Promise<KeyAndCertificate> {
    const other = await TestCertificates.create(host);
    other.remove();
    return other.server;
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
