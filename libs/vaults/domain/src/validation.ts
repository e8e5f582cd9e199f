import { tokenExpired, type CredentialAuth, type RefreshHttpResponse, type RefreshState } from '@berth/contracts';

/** The SDK's `BetaManagedAgentsRefreshObject`: the last refresh exchange, as far as Berth keeps it. */
export type RefreshReport = Readonly<{ status: 'succeeded' | 'failed' | 'connect_error' | 'no_refresh_token'; http_response: RefreshHttpResponse | null }>;

export type McpOAuthValidation = Readonly<{
  status: 'invalid' | 'unknown';
  expired: boolean;
  has_refresh_token: boolean;
  refresh: RefreshReport | null;
  detail: string;
}>;

/** The last exchange of a credential that refreshes: its failure if the last attempt failed, a success if one happened, else none yet. */
function lastExchange(state: RefreshState): RefreshReport | null {
  if (state.last_error !== null) return { status: state.last_error.kind, http_response: state.last_error.http_response };
  return state.last_refreshed_at === null ? null : { status: 'succeeded', http_response: null };
}

/**
 * `POST …/credentials/{id}/mcp_oauth_validate` as far as Berth can answer it without calling the
 * MCP server (the gateway sends nothing to a URL an API user chose). Without a refresh
 * configuration: an expired token is `invalid` (no refresh token to try), any other `unknown`. With
 * one, `refresh` reports the refresher's last exchange: an expired token whose refresh the
 * endpoint refused for good is `invalid`; one whose endpoint failed or could not be reached (it is
 * tried again), or whose refresh is still to come, `unknown`; a live token is `unknown` (no probe ran).
 */
export function mcpOAuthValidation(auth: CredentialAuth & { type: 'mcp_oauth' }, state: RefreshState | null, now: Date): McpOAuthValidation {
  const expired = tokenExpired(auth.expires_at, now);
  const until = auth.expires_at === null ? 'has no known expiry' : `is valid until ${auth.expires_at}`;
  if (!auth.refresh || state === null) {
    if (expired) {
      return {
        status: 'invalid',
        expired,
        has_refresh_token: false,
        refresh: { status: 'no_refresh_token', http_response: null },
        detail: `the access token expired at ${auth.expires_at} and Berth holds no refresh token: update the credential with a new access_token and expires_at`,
      };
    }
    return { status: 'unknown', expired, has_refresh_token: false, refresh: null, detail: `the access token ${until}; Berth does not call the MCP server to test it, so whether the server accepts it is unknown` };
  }
  const refresh = lastExchange(state);
  const refreshing =
    state.status === 'failed'
      ? `refreshing it failed${state.next_attempt_at === null ? '' : ` (tried again at ${state.next_attempt_at})`}: ${state.last_error?.message ?? 'no detail'}`
      : state.status === 'retrying'
        ? `the last refresh failed and is tried again at ${state.next_attempt_at}: ${state.last_error?.message ?? 'no detail'}`
        : state.next_attempt_at === null
          ? 'Berth plans no refresh (the token has no known expiry)'
          : `Berth refreshes it at ${state.next_attempt_at}`;
  if (expired) {
    // Refused for good (the endpoint turned the grant down): only the user can bring it back.
    const refused = state.status === 'failed' && state.next_attempt_at === null;
    return {
      status: refused ? 'invalid' : 'unknown',
      expired,
      has_refresh_token: true,
      refresh,
      detail: `the access token expired at ${auth.expires_at}; ${refreshing}${refused ? ': update the credential with a new refresh_token (or access_token and expires_at)' : ''}`,
    };
  }
  return { status: 'unknown', expired, has_refresh_token: true, refresh, detail: `the access token ${until}; ${refreshing}. Berth does not call the MCP server to test it` };
}
