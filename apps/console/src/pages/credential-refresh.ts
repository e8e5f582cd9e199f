import type { VaultCredential } from '../api/types';

/** What the vault page says about a token's refresh, and how loudly. */
export type RefreshLine = { text: string; tone: 'muted' | 'warning' | 'danger' };

const when = (iso: string): string => new Date(iso).toLocaleString();

/**
 * One line on a credential's token: when it expires and whether Berth refreshes it, and if
 * refreshing is in trouble, what went wrong (the API's words, never a secret). Null for
 * credentials without a token expiry or refresh (bearer tokens, variables).
 */
export function refreshLine(c: VaultCredential): RefreshLine | null {
  if (c.auth.type !== 'mcp_oauth') return null;
  const expires = c.auth.expires_at ? `token expires ${when(c.auth.expires_at)}` : 'token expiry not known';
  const state = c.berth?.refresh ?? null;
  if (!c.auth.refresh || state === null) return { text: `${expires}; not refreshed by Berth (update it before then)`, tone: 'muted' };
  const via = `refreshed by Berth at ${new URL(c.auth.refresh.token_endpoint).host}`;
  if (state.status === 'failed') {
    const again = state.next_attempt_at ? `tried again ${when(state.next_attempt_at)}` : 'not tried again: give it a new refresh token or access token';
    return { text: `${expires}; refresh failed (${again}): ${state.last_error ?? 'no detail'}`, tone: 'danger' };
  }
  if (state.status === 'retrying') return { text: `${expires}; refresh failed, retrying ${when(state.next_attempt_at ?? '')}: ${state.last_error ?? 'no detail'}`, tone: 'warning' };
  const next = state.next_attempt_at ? `, next ${when(state.next_attempt_at)}` : '';
  const last = state.last_refreshed_at ? ` (last ${when(state.last_refreshed_at)})` : '';
  return { text: `${expires}; ${via}${next}${last}`, tone: 'muted' };
}
