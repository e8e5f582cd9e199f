import type { CredentialRecord, RefreshError, RefreshState, SealedSecret } from '@berth/contracts';
import type { RefreshPolicy } from './refresh-policy';
import { credentialAfterRefresh, refreshDue, startedRefreshState, type AttemptResult } from './refresh-state';

const policy: RefreshPolicy = { marginMs: 5 * 60_000, lifetimeShare: 0.2, retryDelaysMs: [10_000, 60_000] };
const now = new Date('2026-05-01T12:00:00.000Z');
const iso = (offsetMs: number) => new Date(now.getTime() + offsetMs).toISOString();
const sealed = (name: string): SealedSecret => ({ key_id: 'k', iv: `iv-${name}`, ciphertext: `ct-${name}`, tag: 't' });
const scheduled: RefreshState = { status: 'scheduled', next_attempt_at: iso(-1_000), last_attempt_at: null, last_refreshed_at: null, consecutive_failures: 0, last_error: null };

const credential = (over: { expiresAt?: string | null; state?: RefreshState; secret?: string; refreshToken?: string; clientSecret?: string; version?: number } = {}): CredentialRecord => ({
  id: 'vcrd_1',
  owner_id: 'owner_a',
  vault_id: 'vlt_1',
  display_name: null,
  metadata: {},
  auth: {
    type: 'mcp_oauth',
    mcp_server_url: 'https://mcp.example.com/mcp',
    expires_at: over.expiresAt === undefined ? iso(60_000) : over.expiresAt,
    refresh: { token_endpoint: 'https://auth.example.com/token', client_id: 'c', token_endpoint_auth: { type: 'client_secret_basic' }, scope: null, resource: null },
  },
  secret: sealed(over.secret ?? 'at_1'),
  refresh: { refresh_token: sealed(over.refreshToken ?? 'rt_1'), client_secret: sealed(over.clientSecret ?? 'cs_1'), state: over.state ?? scheduled },
  version: over.version ?? 3,
  created_at: iso(-3_600_000),
  updated_at: iso(-3_600_000),
  archived_at: null,
});

const refreshed = (rotated: boolean, expiresInMs: number | null = 3_600_000): AttemptResult => ({
  kind: 'refreshed',
  grant: { secret: sealed('at_2'), refreshToken: rotated ? sealed('rt_2') : null, expiresAt: expiresInMs === null ? null : iso(expiresInMs), lifetimeMs: expiresInMs },
});
const error: RefreshError = { kind: 'failed', message: 'the token endpoint answered 503', http_response: { status_code: 503, content_type: 'text/plain', body: 'down', body_truncated: false } };
const failure = (definitive: boolean): AttemptResult => ({ kind: 'failed', definitive, error });

describe('refresh state', () => {
  it('starts scheduled by the margin alone (the lifetime of a token a user gave is unknown), keeping the history of earlier attempts', () => {
    expect(startedRefreshState(iso(3_600_000), null, policy)).toEqual({ ...scheduled, next_attempt_at: iso(3_300_000) });
    const failed: RefreshState = { status: 'failed', next_attempt_at: null, last_attempt_at: iso(-5), last_refreshed_at: iso(-9), consecutive_failures: 4, last_error: error };
    expect(startedRefreshState(null, failed, policy)).toEqual({ ...scheduled, next_attempt_at: null, last_attempt_at: iso(-5), last_refreshed_at: iso(-9) });
  });

  it('is due once its next attempt has come, for a live mcp_oauth credential only', () => {
    expect(refreshDue(credential(), now)).toBe(true);
    expect(refreshDue(credential({ state: { ...scheduled, next_attempt_at: iso(1) } }), now)).toBe(false);
    expect(refreshDue(credential({ state: { ...scheduled, next_attempt_at: null } }), now)).toBe(false);
    expect(refreshDue({ ...credential(), archived_at: iso(-1) }, now)).toBe(false);
  });
});

describe('a credential after a refresh attempt', () => {
  it('a success: the new token and expiry, the rotated refresh token (else the old one kept), planned again by the lifetime, one version more', () => {
    const started = credential();
    const after = credentialAfterRefresh(started, started, refreshed(true), now, policy);
    expect(after?.failed).toBe(false);
    expect(after?.credential).toMatchObject({
      auth: { expires_at: iso(3_600_000) },
      secret: sealed('at_2'),
      refresh: { refresh_token: sealed('rt_2'), client_secret: sealed('cs_1'), state: { status: 'scheduled', next_attempt_at: iso(3_600_000 - 12 * 60_000), last_attempt_at: iso(0), last_refreshed_at: iso(0), consecutive_failures: 0, last_error: null } },
      version: 4,
      updated_at: iso(0),
    });
    expect(credentialAfterRefresh(started, started, refreshed(false), now, policy)?.credential.refresh?.refresh_token).toEqual(sealed('rt_1'));
    expect(credentialAfterRefresh(started, started, refreshed(false, null), now, policy)?.credential).toMatchObject({ auth: { expires_at: null }, refresh: { state: { next_attempt_at: null } } });
  });

  it('a transient failure while the token is valid: retrying after the policy’s wait, but no later than the expiry', () => {
    const started = credential({ expiresAt: iso(3_600_000) });
    const first = credentialAfterRefresh(started, started, failure(false), now, policy);
    expect(first).toMatchObject({ failed: false, credential: { refresh: { state: { status: 'retrying', next_attempt_at: iso(10_000), consecutive_failures: 1, last_error: error, last_attempt_at: iso(0) } }, version: 4 } });
    expect(first?.credential.updated_at).toBe(started.updated_at);
    const soon = credential({ expiresAt: iso(5_000) });
    expect(credentialAfterRefresh(soon, soon, failure(false), now, policy)?.credential.refresh?.state).toMatchObject({ status: 'retrying', next_attempt_at: iso(5_000) });
  });

  it('fails once the token has expired (still tried at the policy’s pace) or the endpoint refused (never again), telling it once', () => {
    const expired = credential({ expiresAt: iso(0), state: { ...scheduled, status: 'retrying', consecutive_failures: 1 } });
    expect(credentialAfterRefresh(expired, expired, failure(false), now, policy)).toMatchObject({ failed: true, credential: { refresh: { state: { status: 'failed', next_attempt_at: iso(60_000), consecutive_failures: 2 } } } });
    const refused = credential();
    expect(credentialAfterRefresh(refused, refused, failure(true), now, policy)).toMatchObject({ failed: true, credential: { refresh: { state: { status: 'failed', next_attempt_at: null } } } });
    const already = credential({ expiresAt: iso(0), state: { ...scheduled, status: 'failed', consecutive_failures: 3 } });
    expect(credentialAfterRefresh(already, already, failure(false), now, policy)?.failed).toBe(false);
  });

  it("a user's new access or refresh token meanwhile wins over what the attempt got", () => {
    const started = credential();
    for (const current of [credential({ secret: 'at_user', version: 4 }), credential({ refreshToken: 'rt_user', version: 4 })]) {
      expect(credentialAfterRefresh(current, started, refreshed(true), now, policy)).toBeNull();
      expect(credentialAfterRefresh(current, started, failure(true), now, policy)).toBeNull();
    }
  });

  it('a success survives other changes meanwhile (the endpoint may have rotated the refresh token); a failure does not', () => {
    const started = credential();
    const renamed = { ...credential({ clientSecret: 'cs_user', version: 4 }), display_name: 'renamed' };
    expect(credentialAfterRefresh(renamed, started, refreshed(true), now, policy)?.credential).toMatchObject({ display_name: 'renamed', refresh: { client_secret: sealed('cs_user'), refresh_token: sealed('rt_2') }, version: 5 });
    expect(credentialAfterRefresh(renamed, started, failure(true), now, policy)).toBeNull();
  });

  it('writes nothing for a credential archived meanwhile, or no longer refreshing', () => {
    const started = credential();
    expect(credentialAfterRefresh({ ...started, archived_at: iso(0) }, started, refreshed(true), now, policy)).toBeNull();
    expect(credentialAfterRefresh({ ...started, refresh: null }, started, refreshed(true), now, policy)).toBeNull();
  });
});
