/** When Berth refreshes an `mcp_oauth` access token, and how it retries (the gateway's `BERTH_VAULT_REFRESH_*`). */
export type RefreshPolicy = Readonly<{
  /** Refresh once less than this remains of a token… */
  marginMs: number;
  /** …or less than this share of its lifetime, where Berth knows the lifetime (a token it got from the endpoint). */
  lifetimeShare: number;
  /** Waits after each failed attempt in a row, the last repeating. */
  retryDelaysMs: readonly number[];
}>;

export const defaultRefreshPolicy: RefreshPolicy = { marginMs: 5 * 60_000, lifetimeShare: 0.2, retryDelaysMs: [10_000, 30_000, 60_000, 120_000, 300_000] };

/**
 * When to refresh a token that expires at `expiresAt`: once less than the margin, or less than the
 * policy's share of its lifetime, remains (whichever comes first), but not before half its lifetime
 * has passed: a token that lives less than twice the margin would otherwise be refreshed the moment
 * it arrived, forever. `lifetimeMs` is the `expires_in` of a token Berth got from the endpoint; a
 * token a user gave has none known, and the margin alone decides (refreshed at once when less than
 * the margin remains). Null for a token without an expiry: nothing to plan.
 */
export function refreshAt(expiresAt: string | null, lifetimeMs: number | null, policy: RefreshPolicy): string | null {
  if (expiresAt === null) return null;
  const ahead = lifetimeMs === null ? policy.marginMs : Math.min(Math.max(policy.marginMs, policy.lifetimeShare * lifetimeMs), lifetimeMs / 2);
  return new Date(Date.parse(expiresAt) - ahead).toISOString();
}

/** The wait after the `failures`-th failed attempt in a row (1 = the first). */
export function retryDelayMs(failures: number, policy: RefreshPolicy): number {
  const delays = policy.retryDelaysMs;
  return delays[Math.min(Math.max(failures, 1), delays.length) - 1] ?? 0;
}
