import { secretScrubber, secretValuesOf } from './secret-scrubber';

describe('secret scrubbing of log lines', () => {
  const env = {
    BERTH_MODEL_API_KEY: 'model-key-0123456789',
    BERTH_MODEL_KEY_TEAM_A: 'team-a-key-abcdefgh',
    MONGO_PASSWORD: 'pa"ss\\word-123',
    BERTH_STORE_URL: 'mongodb://berth:s3cr3t-pw@mongo:27017/berth',
    NATS_URL: 'nats://127.0.0.1:4222',
    BERTH_SANDBOX_SCOPE: 'default',
    SHORT_TOKEN: 'abc',
  };

  it('takes the values of secret-named variables and passwords inside URLs, nothing else', () => {
    expect(secretValuesOf(env).sort()).toEqual(['model-key-0123456789', 'pa"ss\\word-123', 's3cr3t-pw', 'team-a-key-abcdefgh'].sort());
  });

  it('removes those values wherever they appear in a serialized line, JSON-escaped forms included', () => {
    const scrub = secretScrubber(secretValuesOf(env));
    const line = JSON.stringify({ msg: 'exec env BERTH_MODEL_API_KEY=model-key-0123456789', err: { message: 'auth failed for pa"ss\\word-123' }, key: 'team-a-key-abcdefgh' });
    const out = scrub(line);
    for (const secret of ['model-key-0123456789', 'pa\\"ss\\\\word-123', 'team-a-key-abcdefgh']) expect(out).not.toContain(secret);
    expect(JSON.parse(out)).toEqual({ msg: 'exec env BERTH_MODEL_API_KEY=[REDACTED]', err: { message: 'auth failed for [REDACTED]' }, key: '[REDACTED]' });
  });

  it('removes key shapes it was not told about: Berth API keys (keeping the public prefix), provider keys, bearer tokens, URL passwords', () => {
    const scrub = secretScrubber([]);
    expect(scrub('key bk_abcdefghij12_ABCDEFGHIJKLMNOPQRSTUVWXYZ012345 used')).toBe('key bk_abcdefghij12_[REDACTED] used');
    expect(scrub('x-api-key: sk-ant-api03-abcdefghijklmnopqrstuv')).toBe('x-api-key: [REDACTED]');
    expect(scrub('authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig')).toBe('authorization: Bearer [REDACTED]');
    expect(scrub('store mongodb://user:hunter22@db:27017/x')).toBe('store mongodb://user:***@db:27017/x');
  });

  it('leaves a line without secrets as it was', () => {
    const line = '{"level":"info","msg":"turn completed","session_id":"sesn_01","turn_id":"turn_01"}';
    expect(secretScrubber(secretValuesOf(env))(line)).toBe(line);
  });
});
