import { credentialAfterUpdate, credentialFromCreate, mcpOAuthValidation, refreshRefusal, tokenExpired } from './vaults';

const now = new Date('2026-05-01T12:00:00Z');
const oauth = { type: 'mcp_oauth', mcp_server_url: 'https://mcp.example.com/mcp', expires_at: '2026-05-01T13:00:00Z' } as const;

describe('mcp_oauth credentials without refresh', () => {
  it('a token is expired from its expires_at on; one without an expiry never is', () => {
    expect(tokenExpired('2026-05-01T12:00:01Z', now)).toBe(false);
    expect(tokenExpired('2026-05-01T12:00:00Z', now)).toBe(true);
    expect(tokenExpired('2026-05-01T14:00:00+02:00', now)).toBe(true);
    expect(tokenExpired(null, now)).toBe(false);
  });

  it('refuses a refresh configuration on create and update, and lets null or none through', () => {
    const refresh = { token_endpoint: 'https://auth.example.com/token', client_id: 'c', refresh_token: 'r', token_endpoint_auth: { type: 'none' } };
    expect(refreshRefusal({ type: 'mcp_oauth', mcp_server_url: oauth.mcp_server_url, access_token: 'a', refresh })).toMatch(/^auth\.refresh: Berth does not refresh OAuth tokens/);
    expect(refreshRefusal({ type: 'mcp_oauth', refresh: { refresh_token: 'r2' } })).not.toBeNull();
    expect(refreshRefusal({ type: 'mcp_oauth', mcp_server_url: oauth.mcp_server_url, access_token: 'a', refresh: null })).toBeNull();
    expect(refreshRefusal({ type: 'mcp_oauth', access_token: 'a' })).toBeNull();
    expect(refreshRefusal({ type: 'static_bearer', token: 't' })).toBeNull();
  });

  it('takes an expiry ahead of now only', () => {
    expect(credentialFromCreate({ type: 'mcp_oauth', mcp_server_url: oauth.mcp_server_url, access_token: 'a', expires_at: oauth.expires_at }, now).auth).toEqual(oauth);
    expect(() => credentialFromCreate({ type: 'mcp_oauth', mcp_server_url: oauth.mcp_server_url, access_token: 'a', expires_at: '2026-05-01T12:00:00Z' }, now)).toThrow('auth.expires_at must be in the future (2026-05-01T12:00:00Z has passed)');
    expect(() => credentialAfterUpdate(oauth, { type: 'mcp_oauth', expires_at: '2026-04-01T00:00:00Z' }, now)).toThrow(/^auth\.expires_at must be in the future/);
  });

  it('a new token keeps the stored expiry while it lies ahead, and must bring its own once that has passed', () => {
    expect(credentialAfterUpdate(oauth, { type: 'mcp_oauth', access_token: 'b' }, now)).toEqual({ auth: oauth, secret: { value: 'b' } });
    const lapsed = { ...oauth, expires_at: '2026-05-01T11:00:00Z' };
    expect(() => credentialAfterUpdate(lapsed, { type: 'mcp_oauth', access_token: 'b' }, now)).toThrow(/^auth\.expires_at: the stored expiry \(2026-05-01T11:00:00Z\) has passed/);
    expect(credentialAfterUpdate(lapsed, { type: 'mcp_oauth', access_token: 'b', expires_at: null }, now).auth).toEqual({ ...oauth, expires_at: null });
  });

  it('validates from the expiry alone: invalid once expired, unknown before (the server is not called)', () => {
    expect(mcpOAuthValidation(oauth, now)).toEqual({ status: 'unknown', expired: false, detail: expect.stringContaining('is valid until 2026-05-01T13:00:00Z; Berth does not call the MCP server') });
    expect(mcpOAuthValidation({ ...oauth, expires_at: null }, now).detail).toMatch(/^the access token has no known expiry/);
    expect(mcpOAuthValidation({ ...oauth, expires_at: '2026-05-01T12:00:00Z' }, now)).toMatchObject({ status: 'invalid', expired: true });
  });
});
