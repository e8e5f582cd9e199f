import type { CredentialRefreshState, VaultCredential } from '../api/types';
import { refreshLine } from './credential-refresh';

const at = (iso: string) => new Date(iso).toLocaleString();
const state = (over: Partial<CredentialRefreshState> = {}): CredentialRefreshState => ({
  status: 'scheduled',
  next_attempt_at: '2026-05-01T12:48:00Z',
  last_attempt_at: null,
  last_refreshed_at: null,
  last_error: null,
  ...over,
});
const oauth = (refreshing: boolean, refresh: CredentialRefreshState | null = refreshing ? state() : null): VaultCredential => ({
  id: 'vcrd_1',
  vault_id: 'vlt_1',
  display_name: null,
  auth: {
    type: 'mcp_oauth',
    mcp_server_url: 'https://mcp.example.com/mcp',
    expires_at: '2026-05-01T13:00:00Z',
    refresh: refreshing ? { token_endpoint: 'https://auth.example.com/oauth/token', client_id: 'c', token_endpoint_auth: { type: 'none' } } : null,
  },
  berth: { refresh },
  created_at: '2026-05-01T12:00:00Z',
  archived_at: null,
});

describe('the vault page’s line on a token’s refresh', () => {
  it('says when it expires and that Berth does not refresh it, for a credential without refresh; nothing for other types', () => {
    expect(refreshLine(oauth(false))).toEqual({ text: `token expires ${at('2026-05-01T13:00:00Z')}; not refreshed by Berth (update it before then)`, tone: 'muted' });
    expect(refreshLine({ ...oauth(false), auth: { type: 'static_bearer', mcp_server_url: 'https://x.example/' } })).toBeNull();
  });

  it('names the token endpoint and the next refresh, and the last one once there was one', () => {
    expect(refreshLine(oauth(true))?.text).toBe(`token expires ${at('2026-05-01T13:00:00Z')}; refreshed by Berth at auth.example.com, next ${at('2026-05-01T12:48:00Z')}`);
    expect(refreshLine(oauth(true, state({ last_refreshed_at: '2026-05-01T12:00:00Z' })))?.text).toMatch(/\(last .+\)$/);
  });

  it('warns while retrying and shows a failure loudly, with the API’s words and whether it is tried again', () => {
    expect(refreshLine(oauth(true, state({ status: 'retrying', next_attempt_at: '2026-05-01T12:01:00Z', last_error: 'the token endpoint answered 503' })))).toEqual({
      text: `token expires ${at('2026-05-01T13:00:00Z')}; refresh failed, retrying ${at('2026-05-01T12:01:00Z')}: the token endpoint answered 503`,
      tone: 'warning',
    });
    expect(refreshLine(oauth(true, state({ status: 'failed', next_attempt_at: null, last_error: 'the token endpoint answered 400 invalid_grant' })))).toEqual({
      text: `token expires ${at('2026-05-01T13:00:00Z')}; refresh failed (not tried again: give it a new refresh token or access token): the token endpoint answered 400 invalid_grant`,
      tone: 'danger',
    });
  });
});
