import { z } from 'zod';
import { MetadataPatchSchema, MetadataSchema } from '../config/metadata';
import type { SealedSecret } from './secrets';

/**
 * Vaults and their credentials, as the Managed Agents API takes them (`client.beta.vaults`,
 * `client.beta.vaults.credentials`). Secrets are write-only: the request shapes carry them, the
 * public `CredentialAuth` never does.
 */


const DisplayNameSchema = z.string().min(1).max(256);
const SecretSchema = z.string().min(1).max(16_384);
const McpServerUrlSchema = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).max(2048);
/** RFC 3339; "in the future" is checked against the server's clock (`credentialFromCreate`, `credentialAfterUpdate`). */
const FutureTimeSchema = z.iso.datetime({ offset: true });
/**
 * An `mcp_oauth` credential's `refresh` (the SDK's `BetaManagedAgentsMCPOAuthRefreshParams`). Berth
 * does not refresh OAuth tokens, so anything but null is refused, with its own code
 * (`refreshRefusal`) rather than as a schema error the user could not act on.
 */
const RefreshParamsSchema = z.unknown().optional();

/** `api.example.com`, `192.0.2.1` or `*.example.com`; no URLs, ports, paths or IPv6 (as the API documents). */
export const CredentialHostSchema = z
  .string()
  .max(253)
  .transform((h) => h.toLowerCase())
  .refine(
    (h) => /^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/.test(h),
    'must be a host name, an IPv4 address or a *. wildcard (no scheme, port or path)',
  );

export const CredentialNetworkingSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('unrestricted') }),
  z.strictObject({ type: z.literal('limited'), allowed_hosts: z.array(CredentialHostSchema).min(1).max(16) }),
]);
export type CredentialNetworking = z.infer<typeof CredentialNetworkingSchema>;

/** Variables the platform sets itself in every sandbox; a credential may not take their name. */
// The CA variables too: a credential of that name would take the egress's CA away from the harness.
const RESERVED_VARIABLES = /^(PATH|HOME|USER|SHELL|PWD|TERM|LANG|HOSTNAME|(HTTPS?|NO|ALL)_PROXY|(https?|no|all)_proxy|ANTHROPIC_.*|OPENAI_.*|CLAUDE_.*|CODEX_.*|PI_.*|BERTH_.*|IS_SANDBOX|NODE_OPTIONS|LD_.*|NODE_EXTRA_CA_CERTS|SSL_CERT_(FILE|DIR)|CURL_CA_BUNDLE|REQUESTS_CA_BUNDLE|GIT_SSL_CAINFO)$/;
export const SecretNameSchema = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, 'must be an environment variable name (letters, digits, _; not starting with a digit)')
  .refine((name) => !RESERVED_VARIABLES.test(name), 'is a variable the platform sets itself');

const InjectionLocationSchema = z.strictObject({ body: z.boolean().optional(), header: z.boolean().optional() });

export const CredentialAuthCreateSchema = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('static_bearer'),
    mcp_server_url: McpServerUrlSchema,
    token: SecretSchema,
  }),
  z.strictObject({
    type: z.literal('mcp_oauth'),
    mcp_server_url: McpServerUrlSchema,
    access_token: SecretSchema,
    expires_at: FutureTimeSchema.nullish(),
    refresh: RefreshParamsSchema,
  }),
  z.strictObject({
    type: z.literal('environment_variable'),
    secret_name: SecretNameSchema,
    secret_value: SecretSchema,
    networking: CredentialNetworkingSchema,
    injection_location: InjectionLocationSchema.optional(),
  }),
]);
export type CredentialAuthCreate = z.infer<typeof CredentialAuthCreateSchema>;

export const CredentialAuthUpdateSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('static_bearer'), token: SecretSchema.nullish() }),
  z.strictObject({ type: z.literal('mcp_oauth'), access_token: SecretSchema.nullish(), expires_at: FutureTimeSchema.nullish(), refresh: RefreshParamsSchema }),
  z.strictObject({
    type: z.literal('environment_variable'),
    secret_value: SecretSchema.nullish(),
    networking: CredentialNetworkingSchema.nullish(),
    injection_location: InjectionLocationSchema.optional(),
  }),
]);
export type CredentialAuthUpdate = z.infer<typeof CredentialAuthUpdateSchema>;

/** What the API returns for a credential's auth: everything but the secret. */
export type CredentialAuth =
  | Readonly<{ type: 'static_bearer'; mcp_server_url: string }>
  | Readonly<{ type: 'mcp_oauth'; mcp_server_url: string; expires_at: string | null }>
  | Readonly<{ type: 'environment_variable'; secret_name: string; networking: CredentialNetworking; injection_location: { body: boolean; header: boolean } }>;

/** The secret part, sealed at rest: what the egress injects. */
export type CredentialSecret = Readonly<{ value: string }>;

/** `POST /v1/vaults`. */
export const VaultCreateParamsSchema = z.strictObject({ display_name: DisplayNameSchema, metadata: MetadataSchema.optional() });
/** `POST /v1/vaults/{id}`. */
export const VaultUpdateParamsSchema = z.strictObject({ display_name: DisplayNameSchema.nullish(), metadata: MetadataPatchSchema.nullish() });
/** `POST /v1/vaults/{id}/credentials`. */
export const CredentialCreateParamsSchema = z.strictObject({
  auth: CredentialAuthCreateSchema,
  display_name: DisplayNameSchema.nullish(),
  metadata: MetadataSchema.optional(),
});
/** `POST /v1/vaults/{id}/credentials/{credential_id}`: the auth type cannot change. */
export const CredentialUpdateParamsSchema = z.strictObject({
  auth: CredentialAuthUpdateSchema.optional(),
  display_name: DisplayNameSchema.nullish(),
  metadata: MetadataPatchSchema.nullish(),
});
export type VaultCreateParams = z.infer<typeof VaultCreateParamsSchema>;
export type VaultUpdateParams = z.infer<typeof VaultUpdateParamsSchema>;
export type CredentialCreateParams = z.infer<typeof CredentialCreateParamsSchema>;
export type CredentialUpdateParams = z.infer<typeof CredentialUpdateParamsSchema>;

/** A vault session may reference at most this many vaults. */
export const MAX_SESSION_VAULTS = 8;
/** Credentials per vault. */
export const MAX_VAULT_CREDENTIALS = 64;

const normalizeUrl = (url: string): string => new URL(url).href;

/**
 * Why an `mcp_oauth` create or update is refused for its `refresh`, or null when it has none.
 * Berth keeps no refresh token and calls no token endpoint: the owner updates the access token.
 */
export function refreshRefusal(auth: CredentialAuthCreate | CredentialAuthUpdate): string | null {
  if (auth.type !== 'mcp_oauth' || auth.refresh === undefined || auth.refresh === null) return null;
  return (
    'auth.refresh: Berth does not refresh OAuth tokens, so it takes no refresh token or token endpoint. Leave refresh out (or null) ' +
    'and, before expires_at, update the credential with a new access_token and its expires_at: from expires_at on the egress no longer ' +
    'sends the token, refuses the request and tells the session (berth.egress_denied, reason vault_credential_expired).'
  );
}

/** Whether an access token with this expiry is past it at `now` (no expiry: it never is). One rule for the egress and the API. */
export const tokenExpired = (expiresAt: string | null, now: Date): boolean => expiresAt !== null && Date.parse(expiresAt) <= now.getTime();

function futureExpiry(expiresAt: string | null | undefined, now: Date): void {
  if (expiresAt != null && tokenExpired(expiresAt, now)) throw new Error(`auth.expires_at must be in the future (${expiresAt} has passed)`);
}

/**
 * A new credential split into what the API shows and the secret that is sealed; throws a message
 * (a 400) for an injection location that injects nowhere or an `expires_at` that has passed at `now`.
 */
export function credentialFromCreate(auth: CredentialAuthCreate, now: Date): { auth: CredentialAuth; secret: CredentialSecret } {
  switch (auth.type) {
    case 'static_bearer':
      return { auth: { type: 'static_bearer', mcp_server_url: normalizeUrl(auth.mcp_server_url) }, secret: { value: auth.token } };
    case 'mcp_oauth':
      futureExpiry(auth.expires_at, now);
      return { auth: { type: 'mcp_oauth', mcp_server_url: normalizeUrl(auth.mcp_server_url), expires_at: auth.expires_at ?? null }, secret: { value: auth.access_token } };
    case 'environment_variable': {
      const injection_location = { header: auth.injection_location?.header ?? true, body: auth.injection_location?.body ?? false };
      if (!injection_location.header && !injection_location.body) throw new Error('auth.injection_location: at least one of header and body must be enabled');
      return {
        auth: { type: 'environment_variable', secret_name: auth.secret_name, networking: auth.networking, injection_location },
        secret: { value: auth.secret_value },
      };
    }
  }
}

/**
 * An update applied to a credential's auth: the public part after it, and the new secret when one
 * was sent. The auth type and the immutable fields (`mcp_server_url`, `secret_name`) stay.
 * Throws a message (the caller makes it a 400) when the update is of another type, leaves no
 * injection location, sends an `expires_at` that has passed, or a new access token that would keep
 * a stored expiry that has passed (it would never be sent).
 */
export function credentialAfterUpdate(current: CredentialAuth, update: CredentialAuthUpdate, now: Date): { auth: CredentialAuth; secret: CredentialSecret | null } {
  if (update.type !== current.type) throw new Error(`auth.type cannot change from ${current.type} to ${update.type}`);
  if (current.type === 'static_bearer' && update.type === 'static_bearer') {
    return { auth: current, secret: update.token ? { value: update.token } : null };
  }
  if (current.type === 'mcp_oauth' && update.type === 'mcp_oauth') {
    futureExpiry(update.expires_at, now);
    if (update.access_token && update.expires_at === undefined && tokenExpired(current.expires_at, now)) {
      throw new Error(`auth.expires_at: the stored expiry (${current.expires_at}) has passed, so the new access_token would never be sent; send its expires_at too (null when it is not known)`);
    }
    const expires_at = update.expires_at === undefined ? current.expires_at : update.expires_at;
    return { auth: { ...current, expires_at }, secret: update.access_token ? { value: update.access_token } : null };
  }
  if (current.type === 'environment_variable' && update.type === 'environment_variable') {
    const injection_location = {
      header: update.injection_location?.header ?? current.injection_location.header,
      body: update.injection_location?.body ?? current.injection_location.body,
    };
    if (!injection_location.header && !injection_location.body) throw new Error('auth.injection_location: at least one of header and body must stay enabled');
    return {
      auth: { ...current, networking: update.networking ?? current.networking, injection_location },
      secret: update.secret_value ? { value: update.secret_value } : null,
    };
  }
  throw new Error(`auth.type cannot change from ${current.type} to ${update.type}`);
}

export type McpOAuthValidation = Readonly<{ status: 'invalid' | 'unknown'; expired: boolean; detail: string }>;

/**
 * `POST …/credentials/{id}/mcp_oauth_validate` as far as Berth can answer it without calling the
 * MCP server: an expired token is `invalid` (no refresh token to try), any other is `unknown`.
 */
export function mcpOAuthValidation(auth: CredentialAuth & { type: 'mcp_oauth' }, now: Date): McpOAuthValidation {
  if (tokenExpired(auth.expires_at, now)) {
    return { status: 'invalid', expired: true, detail: `the access token expired at ${auth.expires_at} and Berth holds no refresh token: update the credential with a new access_token and expires_at` };
  }
  const until = auth.expires_at === null ? 'has no known expiry' : `is valid until ${auth.expires_at}`;
  return { status: 'unknown', expired: false, detail: `the access token ${until}; Berth does not call the MCP server to test it, so whether the server accepts it is unknown` };
}

/**
 * The value an `environment_variable` credential's variable holds in a sandbox (the sandbox-manager
 * sets it for the harness): the egress puts the secret in its place in the requests it lets
 * through to the credential's hosts. Not secret: it only names the credential.
 */
export const credentialPlaceholder = (credentialId: string): string => `berth-vault-placeholder-${credentialId}`;

/** The MCP server a credential authenticates to, or null for an environment variable. */
export const credentialMcpServerUrl = (auth: CredentialAuth): string | null => (auth.type === 'environment_variable' ? null : auth.mcp_server_url);

export type VaultRecord = Readonly<{
  id: string;
  owner_id: string;
  display_name: string;
  metadata: Readonly<Record<string, string>>;
  created_at: string;
  updated_at: string;
  archived_at: string | null;
}>;

/** A credential: its public auth, and its secret sealed (never returned by the API). */
export type CredentialRecord = Readonly<{
  id: string;
  owner_id: string;
  vault_id: string;
  display_name: string | null;
  metadata: Readonly<Record<string, string>>;
  auth: CredentialAuth;
  secret: SealedSecret;
  created_at: string;
  updated_at: string;
  archived_at: string | null;
}>;
