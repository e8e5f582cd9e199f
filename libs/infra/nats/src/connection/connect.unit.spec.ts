import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateAuthKeys } from '../auth/accounts';
import { issueServiceCreds } from '../auth/auth-setup';
import { readCredsFile } from './connect';

describe('readCredsFile (NATS_CREDS, checked at start)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'berth-creds-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('names the setting and the path when the file cannot be read', () => {
    expect(() => readCredsFile(join(dir, 'missing.creds'))).toThrow(/^NATS_CREDS: cannot read .*missing\.creds: ENOENT/);
  });

  it('refuses a file that is not NATS credentials', () => {
    writeFileSync(join(dir, 'junk.creds'), 'user=admin\npassword=secret\n');
    expect(() => readCredsFile(join(dir, 'junk.creds'))).toThrow(/NATS_CREDS: .*junk\.creds is not NATS credentials/);
  });

  it('accepts what nats-init writes', async () => {
    writeFileSync(join(dir, 'gateway.creds'), await issueServiceCreds(generateAuthKeys(), 'gateway'));
    expect(new TextDecoder().decode(readCredsFile(join(dir, 'gateway.creds')))).toContain('BEGIN USER NKEY SEED');
  });
});
