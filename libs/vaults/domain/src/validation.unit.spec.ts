import type { CredentialAuth, RefreshError, RefreshState } from '@berth/contracts';
import { mcpOAuthValidation } from './validation';

const now = new Date('2026-05-01T12:00:00Z');
const plain = { type: 'mcp_oauth', mcp_server_url: 'https://mcp.example.com/mcp', expires_at: '2026-05-01T13:00:00Z', refresh: null } as const;
const refreshing: CredentialAuth & { type: 'mcp_oauth' } = {
  ...plain,
  refresh: { token_endpoint: 'https://auth.example.com/token', client_id: 'c', token_endpoint_auth: { type: 'none' }, scope: null, resource: null },
};
const state = (over: Partial<RefreshState> = {}): RefreshState => ({ status: 'scheduled', next_attempt_at: '2026-05-01T12:55:00Z', last_attempt_at: null, last_refreshed_at: null, consecutive_failures: 0, last_error: null, ...over });
const refused: RefreshError = { kind: 'failed', message: 'the token endpoint answered 400 invalid_grant', http_response: { status_code: 400, content_type: 'application/json', body: '{"error":"invalid_grant"}', body_truncated: false } };
const down: RefreshError = { kind: 'connect_error', message: 'the token endpoint could not be reached: ECONNREFUSED', http_response: null };

describe('mcp_oauth_validate without a refresh configuration', () => {
  it('is invalid once expired (no refresh token to try), unknown before (the server is not called)', () => {
    expect(mcpOAuthValidation(plain, null, now)).toEqual({ status: 'unknown', expired: false, has_refresh_token: false, refresh: null, detail: expect.stringContaining('is valid until 2026-05-01T13:00:00Z; Berth does not call the MCP server') });
    expect(mcpOAuthValidation({ ...plain, expires_at: null }, null, now).detail).toMatch(/^the access token has no known expiry/);
    expect(mcpOAuthValidation({ ...plain, expires_at: '2026-05-01T12:00:00Z' }, null, now)).toMatchObject({ status: 'invalid', expired: true, refresh: { status: 'no_refresh_token', http_response: null } });
  });
});

describe('mcp_oauth_validate of a credential Berth refreshes', () => {
  it('reports the last exchange: none yet, a success, a failure with the endpoint’s scrubbed answer', () => {
    expect(mcpOAuthValidation(refreshing, state(), now)).toMatchObject({ status: 'unknown', has_refresh_token: true, refresh: null, detail: expect.stringContaining('Berth refreshes it at 2026-05-01T12:55:00Z') });
    expect(mcpOAuthValidation(refreshing, state({ last_refreshed_at: '2026-05-01T11:00:00Z' }), now).refresh).toEqual({ status: 'succeeded', http_response: null });
    expect(mcpOAuthValidation(refreshing, state({ status: 'retrying', last_error: down }), now)).toMatchObject({ status: 'unknown', refresh: { status: 'connect_error', http_response: null } });
  });

  it('an expired token the endpoint refused for good is invalid; one whose endpoint failed (tried again) or whose refresh is still to come, unknown', () => {
    const expired = { ...refreshing, expires_at: '2026-05-01T11:59:00Z' };
    const gone = mcpOAuthValidation(expired, state({ status: 'failed', next_attempt_at: null, last_error: refused }), now);
    expect(gone).toMatchObject({ status: 'invalid', expired: true, has_refresh_token: true, refresh: { status: 'failed', http_response: refused.http_response } });
    expect(gone.detail).toMatch(/refreshing it failed: the token endpoint answered 400 invalid_grant: update the credential with a new refresh_token/);
    expect(mcpOAuthValidation(expired, state({ status: 'failed', next_attempt_at: '2026-05-01T12:05:00Z', last_error: down }), now)).toMatchObject({ status: 'unknown', refresh: { status: 'connect_error' } });
    expect(mcpOAuthValidation(expired, state({ next_attempt_at: '2026-05-01T11:54:00Z' }), now)).toMatchObject({ status: 'unknown', refresh: null });
  });
});
