import { z } from 'zod';
import { MetadataPatchSchema, MetadataSchema } from '../config/metadata';
import { OutboundUrlSchema } from './outbound-url';
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
/** RFC 8707: an absolute URI without a fragment. */
const ResourceIndicatorSchema = z
  .url({ error: 'must be an absolute URI' })
  .max(2048)
  .refine((u) => !u.includes('#'), 'must not hold a fragment');

/** How Berth authenticates to a token endpoint (RFC 6749 §2.3.1), as the SDK names it. */
export const TOKEN_ENDPOINT_AUTH_TYPES = ['none', 'client_secret_basic', 'client_secret_post'] as const;
export type TokenEndpointAuthType = (typeof TOKEN_ENDPOINT_AUTH_TYPES)[number];

const clientSecretRequired = (type: string) =>
  z.string({ error: (issue) => (issue.input === undefined ? `is required for ${type} (the secret Berth sends to the token endpoint)` : 'must be a string') }).min(1).max(16_384);

const TokenEndpointAuthSchema = z.discriminatedUnion(
  'type',
  [
    z.strictObject({ type: z.literal('none') }),
    z.strictObject({ type: z.literal('client_secret_basic'), client_secret: clientSecretRequired('client_secret_basic') }),
    z.strictObject({ type: z.literal('client_secret_post'), client_secret: clientSecretRequired('client_secret_post') }),
  ],
  { error: `type must be one of ${TOKEN_ENDPOINT_AUTH_TYPES.join(', ')}` },
);

/**
 * An `mcp_oauth` credential's `refresh` on create (the SDK's `BetaManagedAgentsMCPOAuthRefreshParams`):
 * Berth refreshes the access token at `token_endpoint` with the refresh_token grant (RFC 6749 §6).
 */
const RefreshCreateSchema = z.strictObject({
  token_endpoint: OutboundUrlSchema,
  client_id: z.string().min(1).max(1024),
  refresh_token: SecretSchema,
  token_endpoint_auth: TokenEndpointAuthSchema,
  scope: z.string().max(2048).nullish(),
  /** RFC 8707's resource indicator, sent with each refresh. */
  resource: ResourceIndicatorSchema.nullish(),
});

/**
 * `refresh` on update (`BetaManagedAgentsMCPOAuthRefreshUpdateParams`): a new refresh token, scope
 * (`""` clears it) or client secret; the endpoint, client id and auth method stay.
 */
const RefreshUpdateSchema = z.strictObject({
  refresh_token: SecretSchema.nullish(),
  scope: z.string().max(2048).nullish(),
  token_endpoint_auth: z
    .discriminatedUnion('type', [
      z.strictObject({ type: z.literal('client_secret_basic'), client_secret: SecretSchema.nullish() }),
      z.strictObject({ type: z.literal('client_secret_post'), client_secret: SecretSchema.nullish() }),
    ], { error: 'type must be client_secret_basic or client_secret_post (the method itself cannot change)' })
    .optional(),
});

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
    refresh: RefreshCreateSchema.nullish(),
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
  z.strictObject({ type: z.literal('mcp_oauth'), access_token: SecretSchema.nullish(), expires_at: FutureTimeSchema.nullish(), refresh: RefreshUpdateSchema.nullish() }),
  z.strictObject({
    type: z.literal('environment_variable'),
    secret_value: SecretSchema.nullish(),
    networking: CredentialNetworkingSchema.nullish(),
    injection_location: InjectionLocationSchema.optional(),
  }),
]);
export type CredentialAuthUpdate = z.infer<typeof CredentialAuthUpdateSchema>;

/**
 * An `mcp_oauth` credential's refresh configuration as the API shows it
 * (`BetaManagedAgentsMCPOAuthRefreshResponse`): no refresh token or client secret, which are sealed.
 */
export type McpOAuthRefresh = Readonly<{
  token_endpoint: string;
  client_id: string;
  token_endpoint_auth: Readonly<{ type: TokenEndpointAuthType }>;
  scope: string | null;
  resource: string | null;
}>;

/**
 * What the API returns for a credential's auth: everything but the secret. An `mcp_oauth` record
 * written before Berth refreshed tokens has no `refresh` (none).
 */
export type CredentialAuth =
  | Readonly<{ type: 'static_bearer'; mcp_server_url: string }>
  | Readonly<{ type: 'mcp_oauth'; mcp_server_url: string; expires_at: string | null; refresh?: McpOAuthRefresh | null }>
  | Readonly<{ type: 'environment_variable'; secret_name: string; networking: CredentialNetworking; injection_location: { body: boolean; header: boolean } }>;

/** The secret part, sealed at rest: what the egress injects. */
export type CredentialSecret = Readonly<{ value: string }>;

/** The text a credential's secret is sealed as (bound to the credential id), and back. */
export const encodeCredentialSecret = (secret: CredentialSecret): string => JSON.stringify(secret);
export const decodeCredentialSecret = (text: string): CredentialSecret => JSON.parse(text) as CredentialSecret;

/** The secrets of a refresh configuration, plain (sealed each on its own at rest: `refreshSecretAad`). */
export type RefreshSecrets = Readonly<{ refresh_token: string; client_secret: string | null }>;

/** What each refresh secret is sealed to: the credential and the secret's name, so neither opens as the other or on another record. */
export const refreshSecretAad = (credentialId: string, name: keyof RefreshSecrets): string => `${credentialId}:${name}`;

/** How the last refresh attempt failed, in the SDK's words (`BetaManagedAgentsRefreshObject.status`). */
export type RefreshFailureKind = 'failed' | 'connect_error';

/** The token endpoint's error answer, scrubbed of secrets and cut short (`BetaManagedAgentsRefreshHTTPResponse`). */
export type RefreshHttpResponse = Readonly<{ status_code: number; content_type: string; body: string; body_truncated: boolean }>;

export type RefreshError = Readonly<{
  kind: RefreshFailureKind;
  /** What went wrong, for people; never a token or secret. */
  message: string;
  /** The endpoint's error answer; null when none came (unreachable, refused, a success that could not be used). */
  http_response: RefreshHttpResponse | null;
}>;

/**
 * Where refreshing a credential stands (Berth's own, shown as `berth.refresh`):
 * - `scheduled`: the next refresh is due at `next_attempt_at` (null: the token has no known expiry, so none is planned);
 * - `retrying`: the last attempt failed; it is tried again at `next_attempt_at` while the token is valid;
 * - `failed`: refreshing stopped working (the endpoint refused the grant, or the token expired
 *   first): the egress refuses the expired token, and `vault_credential.refresh_failed` was sent.
 *   `next_attempt_at` is null after a refusal, else the next try (an unreachable endpoint may come back).
 */
export type RefreshState = Readonly<{
  status: 'scheduled' | 'retrying' | 'failed';
  next_attempt_at: string | null;
  last_attempt_at: string | null;
  last_refreshed_at: string | null;
  consecutive_failures: number;
  last_error: RefreshError | null;
}>;

/** The sealed half of an `mcp_oauth` credential's `auth.refresh`, and where refreshing it stands. */
export type CredentialRefresh = Readonly<{ refresh_token: SealedSecret; client_secret: SealedSecret | null; state: RefreshState }>;

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

/** Whether an access token with this expiry is past it at `now` (no expiry: it never is). One rule for the egress and the API. */
export const tokenExpired = (expiresAt: string | null, now: Date): boolean => expiresAt !== null && Date.parse(expiresAt) <= now.getTime();

function futureExpiry(expiresAt: string | null | undefined, now: Date): void {
  if (expiresAt != null && tokenExpired(expiresAt, now)) throw new Error(`auth.expires_at must be in the future (${expiresAt} has passed)`);
}

/** A credential split into what the API shows and the secrets that are sealed (`refresh`: an `mcp_oauth` refresh configuration's). */
export type CredentialParts = { auth: CredentialAuth; secret: CredentialSecret; refresh: RefreshSecrets | null };

/**
 * A new credential split into what the API shows and the secrets that are sealed; throws a message
 * (a 400) for an injection location that injects nowhere or an `expires_at` that has passed at `now`.
 */
export function credentialFromCreate(auth: CredentialAuthCreate, now: Date): CredentialParts {
  switch (auth.type) {
    case 'static_bearer':
      return { auth: { type: 'static_bearer', mcp_server_url: normalizeUrl(auth.mcp_server_url) }, secret: { value: auth.token }, refresh: null };
    case 'mcp_oauth': {
      futureExpiry(auth.expires_at, now);
      const r = auth.refresh ?? null;
      const refresh: McpOAuthRefresh | null =
        r === null
          ? null
          : { token_endpoint: normalizeUrl(r.token_endpoint), client_id: r.client_id, token_endpoint_auth: { type: r.token_endpoint_auth.type }, scope: r.scope || null, resource: r.resource ?? null };
      return {
        auth: { type: 'mcp_oauth', mcp_server_url: normalizeUrl(auth.mcp_server_url), expires_at: auth.expires_at ?? null, refresh },
        secret: { value: auth.access_token },
        refresh: r === null ? null : { refresh_token: r.refresh_token, client_secret: r.token_endpoint_auth.type === 'none' ? null : r.token_endpoint_auth.client_secret },
      };
    }
    case 'environment_variable': {
      const injection_location = { header: auth.injection_location?.header ?? true, body: auth.injection_location?.body ?? false };
      if (!injection_location.header && !injection_location.body) throw new Error('auth.injection_location: at least one of header and body must be enabled');
      return {
        auth: { type: 'environment_variable', secret_name: auth.secret_name, networking: auth.networking, injection_location },
        secret: { value: auth.secret_value },
        refresh: null,
      };
    }
  }
}

/** An update applied: the public auth after it, the new secret if one was sent, and the refresh secrets it replaces. */
export type CredentialChange = { auth: CredentialAuth; secret: CredentialSecret | null; refresh: Partial<RefreshSecrets> };

/** `auth.refresh` of an update applied to the stored configuration (which it needs: an update cannot add one). */
function refreshAfterUpdate(current: McpOAuthRefresh | null, update: CredentialAuthUpdate & { type: 'mcp_oauth' }): { refresh: McpOAuthRefresh | null; secrets: Partial<RefreshSecrets> } {
  const patch = update.refresh ?? null;
  if (patch === null) return { refresh: current, secrets: {} };
  if (current === null) {
    throw new Error(
      'auth.refresh: this credential was created without a refresh configuration, and an update cannot add one (its token endpoint and client are fixed at create): create a new credential with refresh',
    );
  }
  const secrets: { refresh_token?: string; client_secret?: string } = {};
  if (patch.refresh_token) secrets.refresh_token = patch.refresh_token;
  if (patch.token_endpoint_auth) {
    if (current.token_endpoint_auth.type === 'none') {
      throw new Error('auth.refresh.token_endpoint_auth: this credential authenticates to its token endpoint with none; a client_secret applies to client_secret_basic and client_secret_post only');
    }
    if (patch.token_endpoint_auth.client_secret) secrets.client_secret = patch.token_endpoint_auth.client_secret;
  }
  const scope = patch.scope === undefined || patch.scope === null ? current.scope : patch.scope || null;
  return { refresh: { ...current, scope }, secrets };
}

/**
 * An update applied to a credential's auth: the public part after it, and the new secrets that were
 * sent. The auth type and the immutable fields (`mcp_server_url`, `secret_name`, a refresh
 * configuration's endpoint, client id and auth method) stay. Throws a message (the caller makes it
 * a 400) when the update is of another type, leaves no injection location, sends an `expires_at`
 * that has passed, a new access token that would keep a stored expiry that has passed (it would
 * never be sent), or a refresh change the stored configuration does not allow.
 */
export function credentialAfterUpdate(current: CredentialAuth, update: CredentialAuthUpdate, now: Date): CredentialChange {
  if (update.type !== current.type) throw new Error(`auth.type cannot change from ${current.type} to ${update.type}`);
  if (current.type === 'static_bearer' && update.type === 'static_bearer') {
    return { auth: current, secret: update.token ? { value: update.token } : null, refresh: {} };
  }
  if (current.type === 'mcp_oauth' && update.type === 'mcp_oauth') {
    futureExpiry(update.expires_at, now);
    const { refresh, secrets } = refreshAfterUpdate(current.refresh ?? null, update);
    if (update.access_token && update.expires_at === undefined && tokenExpired(current.expires_at, now)) {
      throw new Error(`auth.expires_at: the stored expiry (${current.expires_at}) has passed, so the new access_token would never be sent; send its expires_at too (null when it is not known)`);
    }
    const expires_at = update.expires_at === undefined ? current.expires_at : update.expires_at;
    return { auth: { ...current, expires_at, refresh }, secret: update.access_token ? { value: update.access_token } : null, refresh: secrets };
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
      refresh: {},
    };
  }
  throw new Error(`auth.type cannot change from ${current.type} to ${update.type}`);
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
  /** An `mcp_oauth` credential with `auth.refresh`: its sealed refresh secrets and refresh state (absent or null otherwise). */
  refresh?: CredentialRefresh | null;
  /** Grows with every write after create, so no write overwrites another it did not see (absent: 0, a record from before versions). */
  version?: number;
  created_at: string;
  updated_at: string;
  archived_at: string | null;
}>;

/** A credential's version for a compare-and-set write. */
export const credentialVersion = (c: Pick<CredentialRecord, 'version'>): number => c.version ?? 0;
