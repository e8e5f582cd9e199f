import type { RefreshError, RefreshHttpResponse } from '@berth/contracts';

/** What came of one POST to a token endpoint, as the HTTP client saw it. */
export type TokenAnswer =
  | Readonly<{ kind: 'answered'; status: number; contentType: string; body: string; truncated: boolean }>
  /** No answer: the name did not resolve, the connection or TLS failed, it timed out. */
  | Readonly<{ kind: 'unreachable'; error: string }>
  /** Not attempted: the endpoint is not a target Berth may reach (its address, its scheme). */
  | Readonly<{ kind: 'refused'; error: string }>;

/** A successful refresh: the new access token, the rotated refresh token if one came, and the token's lifetime if given. */
export type TokenGrant = Readonly<{ accessToken: string; refreshToken: string | null; expiresInMs: number | null }>;

/** What an attempt came to: a grant, or a failure that is `definitive` (retrying cannot help) or not. */
export type RefreshOutcome = Readonly<{ kind: 'refreshed'; grant: TokenGrant }> | Readonly<{ kind: 'failed'; definitive: boolean; error: RefreshError }>;

/** The longest error body kept (and shown by `mcp_oauth_validate`), and the longest description put in a message. */
export const ERROR_BODY_LIMIT = 2048;
const DESCRIPTION_LIMIT = 240;
/** As long as the API takes a token. */
const TOKEN_LIMIT = 16_384;

const TOKEN_FIELDS = /("(?:access_token|refresh_token|id_token|client_secret)"\s*:\s*)"(?:[^"\\]|\\.)*"/g;
const TOKEN_PARAMS = /\b((?:access_token|refresh_token|id_token|client_secret)=)[^&\s"']*/g;

/**
 * `text` with every known secret and every token-named field (JSON or form) replaced by
 * `[redacted]`: an endpoint's error answer is shown to the credential's owner, and some echo what
 * they were sent.
 */
export function scrubbed(text: string, secrets: readonly string[]): string {
  let out = text.replace(TOKEN_FIELDS, '$1"[redacted]"').replace(TOKEN_PARAMS, '$1[redacted]');
  for (const secret of secrets) if (secret.length > 0) out = out.split(secret).join('[redacted]');
  return out;
}

const cut = (text: string, limit: number): string => (text.length > limit ? `${text.slice(0, limit)}…` : text);

function jsonObject(body: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(body);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

const failed = (definitive: boolean, kind: RefreshError['kind'], message: string, http_response: RefreshHttpResponse | null = null): RefreshOutcome => ({
  kind: 'failed',
  definitive,
  error: { kind, message, http_response },
});

/** `expires_in` in milliseconds (a number, or a numeric string as some servers send); undefined when unusable. */
function lifetimeMs(value: unknown): number | null | undefined {
  if (value === undefined || value === null) return null;
  const seconds = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof seconds === 'number' && Number.isFinite(seconds) && seconds > 0 ? Math.round(seconds * 1000) : undefined;
}

type Unusable = Readonly<{ unusable: string; definitive: boolean }>;

/** A 2xx answer as a grant (RFC 6749 §5.1), or why it cannot be used: a token of another type never will be, a malformed answer may be fixed next time. */
function grantOf(body: Record<string, unknown> | null): TokenGrant | Unusable {
  const malformed = (unusable: string): Unusable => ({ unusable, definitive: false });
  if (body === null) return malformed('its body is not a JSON object');
  const { access_token, refresh_token, token_type, expires_in } = body;
  if (typeof access_token !== 'string' || access_token.length === 0 || access_token.length > TOKEN_LIMIT) return malformed('no usable access_token');
  if (token_type !== undefined && (typeof token_type !== 'string' || token_type.toLowerCase() !== 'bearer')) {
    return { unusable: `token_type ${cut(JSON.stringify(token_type), 40)} (the egress sends bearer tokens only)`, definitive: true };
  }
  if (refresh_token !== undefined && refresh_token !== null && (typeof refresh_token !== 'string' || refresh_token.length === 0 || refresh_token.length > TOKEN_LIMIT)) return malformed('an unusable refresh_token');
  const expiresInMs = lifetimeMs(expires_in);
  if (expiresInMs === undefined) return malformed(`expires_in ${cut(JSON.stringify(expires_in), 40)} is not a positive number of seconds`);
  return { accessToken: access_token, refreshToken: typeof refresh_token === 'string' ? refresh_token : null, expiresInMs };
}

/**
 * What a token endpoint's answer means. A 2xx with a bearer access token is a grant. An error
 * answer whose OAuth error says the grant or the client is wrong (`invalid_grant`, `invalid_client`,
 * …), a redirect (not followed), any other 4xx, a non-bearer token or a refused target is
 * definitive; a 5xx, 429, 408, `temporarily_unavailable`, an unreachable endpoint or a 2xx without
 * a usable token is worth another try. Error bodies are kept scrubbed of `secrets` and cut short;
 * a 2xx body (it holds tokens) never is.
 */
export function readTokenAnswer(answer: TokenAnswer, secrets: readonly string[]): RefreshOutcome {
  if (answer.kind === 'refused') return failed(true, 'connect_error', `the token endpoint may not be reached: ${answer.error}`);
  if (answer.kind === 'unreachable') return failed(false, 'connect_error', `the token endpoint could not be reached: ${scrubbed(answer.error, secrets)}`);
  const { status, contentType } = answer;
  if (status >= 200 && status < 300) {
    const grant = answer.truncated ? { unusable: 'it is larger than Berth reads', definitive: false } : grantOf(jsonObject(answer.body));
    if (!('unusable' in grant)) return { kind: 'refreshed', grant };
    return failed(grant.definitive, 'failed', `the token endpoint answered ${status} without a token Berth can use: ${grant.unusable}`, { status_code: status, content_type: contentType, body: '', body_truncated: false });
  }
  const body = scrubbed(answer.body, secrets);
  const http_response: RefreshHttpResponse = {
    status_code: status,
    content_type: contentType,
    body: body.slice(0, ERROR_BODY_LIMIT),
    body_truncated: answer.truncated || body.length > ERROR_BODY_LIMIT,
  };
  if (status >= 300 && status < 400) return failed(true, 'failed', `the token endpoint answered ${status}: redirects are not followed (set token_endpoint to where it points)`, http_response);
  const error = jsonObject(answer.body);
  const code = typeof error?.['error'] === 'string' ? cut(scrubbed(error['error'], secrets), 64) : null;
  const description = typeof error?.['error_description'] === 'string' ? cut(scrubbed(error['error_description'], secrets), DESCRIPTION_LIMIT) : null;
  // RFC 6749 §5.2's codes (invalid_grant, invalid_client, …) all say the grant or the client is wrong.
  const transient = status >= 500 || status === 429 || status === 408 || code === 'temporarily_unavailable' || code === 'server_error';
  const message = `the token endpoint answered ${status}${code === null ? '' : ` ${code}`}${description === null ? '' : `: ${description}`}`;
  return failed(!transient, 'failed', message, http_response);
}
