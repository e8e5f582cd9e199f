import type { McpOAuthRefresh, RefreshSecrets } from '@berth/contracts';

/** One POST to a token endpoint: its headers and form-encoded body (which hold the secrets: never logged). */
export type TokenRequest = Readonly<{ url: string; headers: Readonly<Record<string, string>>; body: string }>;

/** `application/x-www-form-urlencoded` of one value, as RFC 6749 §2.3.1 encodes the Basic credentials. */
const formEncoded = (value: string): string => new URLSearchParams({ v: value }).toString().slice(2);

/**
 * The refresh_token grant (RFC 6749 §6) for a credential's configuration, the client
 * authenticated as it says (§2.3.1): `none` sends `client_id` in the body, `client_secret_post` the
 * id and secret in the body, `client_secret_basic` both (form-encoded) as HTTP Basic. `scope` and
 * RFC 8707's `resource` go along when configured.
 */
export function tokenRequest(config: McpOAuthRefresh, secrets: RefreshSecrets): TokenRequest {
  const form = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: secrets.refresh_token });
  if (config.scope) form.set('scope', config.scope);
  if (config.resource) form.set('resource', config.resource);
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
  const method = config.token_endpoint_auth.type;
  if (method !== 'none' && !secrets.client_secret) throw new Error(`${method} needs the client secret, and the credential holds none`);
  if (method === 'client_secret_basic') {
    headers['authorization'] = `Basic ${Buffer.from(`${formEncoded(config.client_id)}:${formEncoded(secrets.client_secret ?? '')}`).toString('base64')}`;
  } else {
    form.set('client_id', config.client_id);
    if (method === 'client_secret_post') form.set('client_secret', secrets.client_secret ?? '');
  }
  return { url: config.token_endpoint, headers, body: form.toString() };
}
