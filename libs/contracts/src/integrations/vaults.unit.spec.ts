import { parseWith } from '../parse';
import { CredentialCreateParamsSchema, CredentialUpdateParamsSchema, credentialAfterUpdate, credentialFromCreate, tokenExpired, type CredentialAuth } from './vaults';

const now = new Date('2026-05-01T12:00:00Z');
const oauth = { type: 'mcp_oauth', mcp_server_url: 'https://mcp.example.com/mcp', expires_at: '2026-05-01T13:00:00Z', refresh: null } as const;
const refresh = { token_endpoint: 'https://auth.example.com/token', client_id: 'berth', refresh_token: 'rt_1', token_endpoint_auth: { type: 'client_secret_basic', client_secret: 'cs_1' } } as const;
const refreshing: CredentialAuth = {
  ...oauth,
  refresh: { token_endpoint: 'https://auth.example.com/token', client_id: 'berth', token_endpoint_auth: { type: 'client_secret_basic' }, scope: 'mcp', resource: null },
};

/** The 400 message the edge gives for a create body. */
const refusedCreate = (auth: Record<string, unknown>): string => {
  try {
    parseWith(CredentialCreateParamsSchema, { auth });
    return 'accepted';
  } catch (e) {
    return (e as Error).message;
  }
};

describe('mcp_oauth credentials', () => {
  it('a token is expired from its expires_at on; one without an expiry never is', () => {
    expect(tokenExpired('2026-05-01T12:00:01Z', now)).toBe(false);
    expect(tokenExpired('2026-05-01T12:00:00Z', now)).toBe(true);
    expect(tokenExpired('2026-05-01T14:00:00+02:00', now)).toBe(true);
    expect(tokenExpired(null, now)).toBe(false);
  });

  it('takes an expiry ahead of now only', () => {
    expect(credentialFromCreate({ type: 'mcp_oauth', mcp_server_url: oauth.mcp_server_url, access_token: 'a', expires_at: oauth.expires_at }, now).auth).toEqual(oauth);
    expect(() => credentialFromCreate({ type: 'mcp_oauth', mcp_server_url: oauth.mcp_server_url, access_token: 'a', expires_at: '2026-05-01T12:00:00Z' }, now)).toThrow('auth.expires_at must be in the future (2026-05-01T12:00:00Z has passed)');
    expect(() => credentialAfterUpdate(oauth, { type: 'mcp_oauth', expires_at: '2026-04-01T00:00:00Z' }, now)).toThrow(/^auth\.expires_at must be in the future/);
  });

  it('a new token keeps the stored expiry while it lies ahead, and must bring its own once that has passed', () => {
    expect(credentialAfterUpdate(oauth, { type: 'mcp_oauth', access_token: 'b' }, now)).toEqual({ auth: oauth, secret: { value: 'b' }, refresh: {} });
    const lapsed = { ...oauth, expires_at: '2026-05-01T11:00:00Z' };
    expect(() => credentialAfterUpdate(lapsed, { type: 'mcp_oauth', access_token: 'b' }, now)).toThrow(/^auth\.expires_at: the stored expiry \(2026-05-01T11:00:00Z\) has passed/);
    expect(credentialAfterUpdate(lapsed, { type: 'mcp_oauth', access_token: 'b', expires_at: null }, now).auth).toEqual({ ...oauth, expires_at: null });
  });

  it('a record from before refresh (no refresh field) updates as one without', () => {
    const { refresh: _none, ...old } = oauth;
    expect(credentialAfterUpdate(old, { type: 'mcp_oauth', access_token: 'b' }, now).auth).toEqual(oauth);
  });
});

describe('mcp_oauth refresh configuration', () => {
  it('on create: the public part in auth (normalized endpoint, no secrets), the refresh token and client secret apart, to be sealed', () => {
    const parts = credentialFromCreate({ type: 'mcp_oauth', mcp_server_url: oauth.mcp_server_url, access_token: 'a', expires_at: oauth.expires_at, refresh: { ...refresh, token_endpoint: 'https://AUTH.example.com/token', scope: 'mcp' } }, now);
    expect(parts.auth).toEqual(refreshing);
    expect(JSON.stringify(parts.auth)).not.toMatch(/rt_1|cs_1/);
    expect(parts.refresh).toEqual({ refresh_token: 'rt_1', client_secret: 'cs_1' });
    const none = credentialFromCreate({ type: 'mcp_oauth', mcp_server_url: oauth.mcp_server_url, access_token: 'a', refresh: { ...refresh, token_endpoint_auth: { type: 'none' }, scope: '', resource: 'https://mcp.example.com/' } }, now);
    expect(none.refresh).toEqual({ refresh_token: 'rt_1', client_secret: null });
    expect(none.auth).toMatchObject({ refresh: { token_endpoint_auth: { type: 'none' }, scope: null, resource: 'https://mcp.example.com/' } });
  });

  it('refuses at the edge, naming the field: a relative or non-http endpoint, one with credentials, a missing client secret, an unknown method', () => {
    const base = { type: 'mcp_oauth', mcp_server_url: oauth.mcp_server_url, access_token: 'a' };
    expect(refusedCreate({ ...base, refresh })).toBe('accepted');
    expect(refusedCreate({ ...base, refresh: { ...refresh, token_endpoint: '/token' } })).toBe('auth.refresh.token_endpoint: must be an http(s) URL');
    expect(refusedCreate({ ...base, refresh: { ...refresh, token_endpoint: 'ftp://auth.example.com/token' } })).toBe('auth.refresh.token_endpoint: must be an http(s) URL');
    expect(refusedCreate({ ...base, refresh: { ...refresh, token_endpoint: 'https://u:p@auth.example.com/token' } })).toBe('auth.refresh.token_endpoint: must not hold credentials or a fragment');
    expect(refusedCreate({ ...base, refresh: { ...refresh, token_endpoint_auth: { type: 'client_secret_post' } } })).toBe(
      'auth.refresh.token_endpoint_auth.client_secret: is required for client_secret_post (the secret Berth sends to the token endpoint)',
    );
    expect(refusedCreate({ ...base, refresh: { ...refresh, token_endpoint_auth: { type: 'none', client_secret: 'x' } } })).toBe('auth.refresh.token_endpoint_auth.client_secret: is not a field Berth accepts here');
    expect(refusedCreate({ ...base, refresh: { ...refresh, token_endpoint_auth: { type: 'private_key_jwt' } } })).toBe(
      'auth.refresh.token_endpoint_auth.type: type must be one of none, client_secret_basic, client_secret_post',
    );
    expect(refusedCreate({ ...base, refresh: { ...refresh, client_id: '' } })).toMatch(/^auth\.refresh\.client_id: /);
    expect(refusedCreate({ ...base, refresh: { ...refresh, refresh_token: undefined } })).toMatch(/^auth\.refresh\.refresh_token: /);
  });

  it('on update: a new refresh token or client secret to seal, the scope changed or cleared; the endpoint, client and method stay', () => {
    const change = credentialAfterUpdate(refreshing, { type: 'mcp_oauth', refresh: { refresh_token: 'rt_2', scope: '', token_endpoint_auth: { type: 'client_secret_post', client_secret: 'cs_2' } } }, now);
    expect(change.refresh).toEqual({ refresh_token: 'rt_2', client_secret: 'cs_2' });
    expect(change.auth).toEqual({ ...refreshing, refresh: { ...(refreshing.type === 'mcp_oauth' ? refreshing.refresh : null), scope: null } });
    expect(credentialAfterUpdate(refreshing, { type: 'mcp_oauth', refresh: null }, now)).toEqual({ auth: refreshing, secret: null, refresh: {} });
    expect(credentialAfterUpdate(refreshing, { type: 'mcp_oauth', refresh: { scope: 'mcp other' } }, now).auth).toMatchObject({ refresh: { scope: 'mcp other' } });
    expect(parseWith(CredentialUpdateParamsSchema, { auth: { type: 'mcp_oauth', refresh: { refresh_token: 'rt_2' } } })).toBeDefined();
    expect(() => parseWith(CredentialUpdateParamsSchema, { auth: { type: 'mcp_oauth', refresh: { token_endpoint: 'https://x.example/token' } } })).toThrow('auth.refresh.token_endpoint: is not a field Berth accepts here');
  });

  it('an update cannot add a refresh configuration, nor give a client secret to a client that authenticates with none', () => {
    expect(() => credentialAfterUpdate(oauth, { type: 'mcp_oauth', refresh: { refresh_token: 'rt' } }, now)).toThrow(/^auth\.refresh: this credential was created without a refresh configuration/);
    const public_ = { ...refreshing, refresh: { ...(refreshing.type === 'mcp_oauth' && refreshing.refresh ? refreshing.refresh : ({} as never)), token_endpoint_auth: { type: 'none' as const } } };
    expect(() => credentialAfterUpdate(public_, { type: 'mcp_oauth', refresh: { token_endpoint_auth: { type: 'client_secret_basic', client_secret: 'x' } } }, now)).toThrow(
      /^auth\.refresh\.token_endpoint_auth: this credential authenticates to its token endpoint with none/,
    );
  });
});
