import { normalizeHost, tokenExpired } from '@berth/contracts';
import type { EgressDenial } from './denial';
import type { AbsoluteTarget, Target } from './targets';

/**
 * A vault credential of the session, opened by the egress: the MCP server URL it is bound to, its
 * token, when that expires (an `mcp_oauth` credential's `expires_at`; null: not known to) and
 * whether Berth refreshes it (an `mcp_oauth` credential with a refresh configuration). Only the
 * egress holds one, and only for the second it caches a sandbox's context.
 */
export type BoundCredential = Readonly<{ credentialId: string; vaultId: string; mcpServerUrl: string; token: string; expiresAt: string | null; refreshes: boolean }>;

type Scope = Readonly<{ protocol: 'http:' | 'https:'; host: string; port: number; path: string }>;

/** The scope a credential's URL covers: its scheme, host, port and path (null for a URL the egress cannot serve). */
function scopeOf(mcpServerUrl: string): Scope | null {
  let url: URL;
  try {
    url = new URL(mcpServerUrl);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  const path = url.pathname.length > 1 && url.pathname.endsWith('/') ? url.pathname.slice(0, -1) : url.pathname;
  const port = url.port !== '' ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  return { protocol: url.protocol, host: normalizeHost(url.hostname), port, path };
}

const pathOf = (pathAndQuery: string): string => {
  const q = pathAndQuery.indexOf('?');
  return q === -1 ? pathAndQuery : pathAndQuery.slice(0, q);
};

const covers = (scope: Scope, target: AbsoluteTarget): boolean => {
  if (scope.protocol !== target.protocol || scope.host !== target.host || scope.port !== target.port) return false;
  const path = pathOf(target.pathAndQuery);
  return scope.path === '/' || path === scope.path || path.startsWith(`${scope.path}/`);
};

/**
 * Whether the egress terminates TLS for a CONNECT to `target`: exactly when one of the session's
 * credentials is bound to an `https://` URL of that host and port. Every other tunnel stays opaque
 * (the egress never sees inside it, and no certificate of its CA is shown for that host).
 */
export function terminatesTls(credentials: readonly BoundCredential[], target: Target): boolean {
  return credentials.some((credential) => {
    const scope = scopeOf(credential.mcpServerUrl);
    return scope !== null && scope.protocol === 'https:' && scope.host === target.host && scope.port === target.port;
  });
}

/**
 * The credential to add to a request (plain HTTP, or inside a terminated TLS tunnel): one bound to
 * the same scheme, host and port whose URL's
 * path is the request's path or a parent of it (`http://mcp.example.com/mcp` covers `/mcp` and
 * `/mcp/…`, not `/admin`); the longest such path wins, then the first in vault order. The target's
 * path has its dot segments resolved already, so `/mcp/../admin` is `/admin`.
 */
export function credentialFor(credentials: readonly BoundCredential[], target: AbsoluteTarget): BoundCredential | null {
  let best: { credential: BoundCredential; length: number } | null = null;
  for (const credential of credentials) {
    const scope = scopeOf(credential.mcpServerUrl);
    if (scope === null || !covers(scope, target)) continue;
    if (best === null || scope.path.length > best.length) best = { credential, length: scope.path.length };
  }
  return best?.credential ?? null;
}

/** The request's headers with the credential as `Authorization: Bearer`, replacing whatever the sandbox sent. */
export function withCredential(headers: Readonly<Record<string, string | string[]>>, credential: BoundCredential): Record<string, string | string[]> {
  return { ...headers, authorization: `Bearer ${credential.token}` };
}

/** Whether the credential's token has expired at `now` (then it is not sent). */
export const credentialExpired = (credential: BoundCredential, now: Date): boolean => tokenExpired(credential.expiresAt, now);

/**
 * The refusal of a request a credential covers whose token has expired at `now`, or null while it
 * has not. Rather than send a dead token (or none, which an MCP client may take as a cue to start
 * an OAuth flow of its own), the egress refuses the request and says what to do: for a credential
 * Berth refreshes, look at why its refresh failed; for one it does not, update its token.
 */
export function expiredCredentialDenial(credential: BoundCredential, target: Target, now: Date): EgressDenial | null {
  if (!credentialExpired(credential, now)) return null;
  const where = target.host.includes(':') ? `[${target.host}]:${target.port}` : `${target.host}:${target.port}`;
  const path = `/v1/vaults/${credential.vaultId}/credentials/${credential.credentialId}`;
  const remedy = credential.refreshes
    ? `and Berth could not refresh it: GET ${path} says why (berth.refresh). Update the credential with a new refresh_token, or a new access_token and expires_at (POST ${path}); the session uses it within a second.`
    : `and the credential has no refresh configuration. Update it with a new access_token and expires_at (POST ${path}); the session uses it within a second.`;
  return {
    host: target.host,
    port: target.port,
    reason: 'vault_credential_expired',
    setting: null,
    message:
      `Berth egress did not send the request to ${where}: the access token of vault credential ${credential.credentialId} (vault ${credential.vaultId}) ` +
      `for ${credential.mcpServerUrl} expired at ${credential.expiresAt}, ${remedy}`,
  };
}
