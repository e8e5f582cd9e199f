import { mkdtempSync, rmSync } from 'node:fs';
import { createCertificateAuthority, issueServerCertificate, type CertificateAuthority } from '@berth/secrets';
import { LeafCertificates } from './leaf-certificates';

describe('leaf certificates of the hosts the egress terminates TLS for', () => {
  const dir = mkdtempSync('/tmp/berth-leaves-');
  let ca: CertificateAuthority;
  beforeAll(async () => {
    ca = await createCertificateAuthority(dir, 'Berth egress CA leaves');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const counting = (fail: Set<string> = new Set()) => {
    const issued: string[] = [];
    const issue: typeof issueServerCertificate = async (authority, host, days) => {
      issued.push(host);
      if (fail.has(host)) throw new Error(`cannot issue for ${host}`);
      return issueServerCertificate(authority, host, days);
    };
    return { issued, issue };
  };

  it('issues once per host, also for concurrent asks, and again after half its day', async () => {
    let now = 1_000_000;
    const { issued, issue } = counting();
    const leaves = new LeafCertificates({ ca, issue, now: () => now });
    const [a, b] = await Promise.all([leaves.contextFor('a.test'), leaves.contextFor('a.test')]);
    expect(a).toBe(b);
    await leaves.contextFor('b.test');
    now += 12 * 3600 * 1000 - 1;
    expect(await leaves.contextFor('a.test')).toBe(a);
    now += 1;
    expect(await leaves.contextFor('a.test')).not.toBe(a);
    expect(issued).toEqual(['a.test', 'b.test', 'a.test']);
  });

  it('keeps no failed issue: the next ask tries again', async () => {
    const fail = new Set(['broken.test']);
    const { issued, issue } = counting(fail);
    const leaves = new LeafCertificates({ ca, issue });
    await expect(leaves.contextFor('broken.test')).rejects.toThrow('cannot issue for broken.test');
    fail.clear();
    await expect(leaves.contextFor('broken.test')).resolves.toBeDefined();
    expect(issued).toEqual(['broken.test', 'broken.test']);
  });
});
