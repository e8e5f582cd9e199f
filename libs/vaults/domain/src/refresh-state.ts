import { credentialVersion, tokenExpired, type CredentialRecord, type RefreshError, type RefreshState, type SealedSecret } from '@berth/contracts';
import { refreshAt, retryDelayMs, type RefreshPolicy } from './refresh-policy';

/**
 * Refreshing (re)started: when a credential with a refresh configuration is created, or its auth
 * is updated (a new access token, expiry or refresh token gives a failed credential a new start).
 * The times of earlier attempts stay, as history.
 */
export function startedRefreshState(expiresAt: string | null, previous: RefreshState | null, policy: RefreshPolicy): RefreshState {
  return {
    status: 'scheduled',
    next_attempt_at: refreshAt(expiresAt, null, policy),
    last_attempt_at: previous?.last_attempt_at ?? null,
    last_refreshed_at: previous?.last_refreshed_at ?? null,
    consecutive_failures: 0,
    last_error: null,
  };
}

/** Whether the refresher should try `credential` at `now`: it has a refresh configuration and its next attempt is due. */
export function refreshDue(credential: CredentialRecord, now: Date): boolean {
  const next = credential.refresh?.state.next_attempt_at ?? null;
  return credential.auth.type === 'mcp_oauth' && credential.archived_at === null && next !== null && Date.parse(next) <= now.getTime();
}

/** A successful attempt's tokens, sealed (`refreshToken` null: the endpoint did not rotate it) and the new token's expiry. */
export type SealedGrant = Readonly<{ secret: SealedSecret; refreshToken: SealedSecret | null; expiresAt: string | null; lifetimeMs: number | null }>;

export type AttemptResult = Readonly<{ kind: 'refreshed'; grant: SealedGrant }> | Readonly<{ kind: 'failed'; definitive: boolean; error: RefreshError }>;

const sameSealed = (a: SealedSecret | null | undefined, b: SealedSecret | null | undefined): boolean =>
  a === b || (a != null && b != null && a.key_id === b.key_id && a.iv === b.iv && a.ciphertext === b.ciphertext && a.tag === b.tag);

/** The state after a failed attempt: retried while the token is valid (by its expiry at the latest), failed once it has expired or the endpoint refused. */
function stateAfterFailure(state: RefreshState, expiresAt: string | null, definitive: boolean, error: RefreshError, now: Date, policy: RefreshPolicy): RefreshState {
  const failures = state.consecutive_failures + 1;
  const retry = now.getTime() + retryDelayMs(failures, policy);
  const expired = tokenExpired(expiresAt, now);
  const base = { ...state, last_attempt_at: now.toISOString(), consecutive_failures: failures, last_error: error };
  if (definitive) return { ...base, status: 'failed', next_attempt_at: null };
  // An endpoint that cannot be reached may come back: a failed credential is still tried, at the policy's pace.
  if (expired) return { ...base, status: 'failed', next_attempt_at: new Date(retry).toISOString() };
  // One more try when the token expires, so a failure is known by then.
  const next = expiresAt === null ? retry : Math.min(retry, Date.parse(expiresAt));
  return { ...base, status: 'retrying', next_attempt_at: new Date(next).toISOString() };
}

/**
 * The credential after a refresh attempt that read `started`, to be written over `current` (the
 * record now), with `failed` true when this attempt is the one that made refreshing fail (its
 * `vault_credential.refresh_failed` goes with the write). Null when there is nothing to write:
 * the credential no longer refreshes, was archived, or a user replaced what the attempt was
 * about meanwhile. A user's new access or refresh token always wins over what the attempt got; a
 * success survives other changes (a new client secret, a renamed credential), since the endpoint
 * may have rotated the refresh token and the old one would no longer work; a failure is dropped
 * after any change of the auth or its secrets (the update started refreshing afresh).
 */
export function credentialAfterRefresh(
  current: CredentialRecord,
  started: CredentialRecord,
  result: AttemptResult,
  now: Date,
  policy: RefreshPolicy,
): { credential: CredentialRecord; failed: boolean } | null {
  const refresh = current.refresh ?? null;
  if (current.auth.type !== 'mcp_oauth' || !current.auth.refresh || refresh === null || current.archived_at !== null) return null;
  const tokensKept = sameSealed(current.secret, started.secret) && sameSealed(refresh.refresh_token, started.refresh?.refresh_token);
  if (!tokensKept) return null;
  const version = credentialVersion(current) + 1;
  if (result.kind === 'refreshed') {
    const { grant } = result;
    const state: RefreshState = {
      status: 'scheduled',
      next_attempt_at: refreshAt(grant.expiresAt, grant.lifetimeMs, policy),
      last_attempt_at: now.toISOString(),
      last_refreshed_at: now.toISOString(),
      consecutive_failures: 0,
      last_error: null,
    };
    return {
      credential: {
        ...current,
        auth: { ...current.auth, expires_at: grant.expiresAt },
        secret: grant.secret,
        refresh: { ...refresh, refresh_token: grant.refreshToken ?? refresh.refresh_token, state },
        version,
        updated_at: now.toISOString(),
      },
      failed: false,
    };
  }
  const unchanged = JSON.stringify(current.auth) === JSON.stringify(started.auth) && sameSealed(refresh.client_secret, started.refresh?.client_secret);
  if (!unchanged) return null;
  const state = stateAfterFailure(refresh.state, current.auth.expires_at, result.definitive, result.error, now, policy);
  return { credential: { ...current, refresh: { ...refresh, state }, version }, failed: state.status === 'failed' && refresh.state.status !== 'failed' };
}
