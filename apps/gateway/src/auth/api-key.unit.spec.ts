import { hashSecret, issueApiKey, parseApiKey, secretMatches } from './api-key';

describe('API keys', () => {
  const issue = () => issueApiKey({ ownerId: 'owner_1', name: 'ci', id: 'bk_1', now: new Date('2026-01-01T00:00:00Z') });

  it('issues bk_<prefix>_<secret> and stores only the prefix and the sha256 of the secret', () => {
    const { key, record } = issue();
    const parsed = parseApiKey(key);
    expect(parsed).not.toBeNull();
    expect(record.prefix).toBe(parsed?.prefix);
    expect(record.hash).toBe(hashSecret(parsed?.secret ?? ''));
    expect(JSON.stringify(record)).not.toContain(parsed?.secret);
  });

  it('matches only the right secret', () => {
    const { key, record } = issue();
    const secret = parseApiKey(key)?.secret ?? '';
    expect(secretMatches(secret, record.hash)).toBe(true);
    expect(secretMatches(secret.slice(0, -1) + (secret.endsWith('A') ? 'B' : 'A'), record.hash)).toBe(false);
    expect(secretMatches(secret, 'not-hex')).toBe(false);
  });

  it('draws different keys every time', () => {
    expect(new Set(Array.from({ length: 50 }, () => issue().key)).size).toBe(50);
  });

  it.each(['', 'bk_', 'bk_abc_def', 'sk-ant-api03-xyz', `bk_ABCDEFGHIJKL_${'a'.repeat(32)}`, `bk_abcdefghijkl_${'a'.repeat(31)}`, `bk_abcdefghijkl_${'a'.repeat(32)} `])('rejects malformed key %p', (key) => {
    expect(parseApiKey(key)).toBeNull();
  });
});
