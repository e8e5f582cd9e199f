/**
 * The slice of the Managed Agents API (plus Berth's extensions) the console reads. The full
 * shapes are the official SDK's `resources/beta/{agents,environments,sessions}` types; fields the
 * console never shows are left out on purpose.
 */

export type Page<T> = { data: T[]; next_page: string | null; prev_page?: string | null };

/** The tools of the `agent_toolset_20260401` toolset. */
export const AGENT_TOOLS = ['bash', 'edit', 'read', 'write', 'glob', 'grep', 'web_fetch', 'web_search'] as const;
export type AgentToolName = (typeof AGENT_TOOLS)[number];

export type PermissionPolicy = { type: 'always_allow' | 'always_ask' | 'auto' };
/** A tool's grant; the web tools' own options (`allowed_domains`, …) ride along untouched by the console. */
export type ToolGrantConfig = { name: string; enabled: boolean; permission_policy: PermissionPolicy; [option: string]: unknown };
export type ToolsetDefault = { enabled: boolean; permission_policy: PermissionPolicy };
export type AgentTool =
  | { type: 'agent_toolset_20260401'; default_config: ToolsetDefault; configs: ToolGrantConfig[] }
  | { type: 'mcp_toolset'; mcp_server_name: string; default_config: ToolsetDefault; configs: ToolGrantConfig[] }
  | CustomTool;
/** A tool the client runs itself: the model calls it, the session waits for the client's `user.custom_tool_result`. */
export type CustomTool = { type: 'custom'; name: string; description: string; input_schema: Record<string, unknown> };
export type McpServer = { type: 'url'; name: string; url: string };

export type Agent = {
  id: string;
  type: 'agent';
  name: string;
  description: string | null;
  system: string | null;
  model: { id: string; effort?: { type: string } };
  tools: AgentTool[];
  mcp_servers: McpServer[];
  version: number;
  created_at: string;
  updated_at: string;
  archived_at: string | null;
};

export const HARNESSES = ['claude-code', 'codex', 'pi', 'hermes', 'deepseek-harness'] as const;
export type Harness = (typeof HARNESSES)[number];

export type Packages = { type?: 'packages'; apt: string[]; cargo?: string[]; gem?: string[]; go?: string[]; npm: string[]; pip: string[] };

/** Managed Agents `config` plus Berth's sandbox settings, as the API returns them (every field present). */
export type EnvironmentConfig = {
  type: 'cloud' | 'self_hosted';
  packages?: Packages;
  harness: Harness;
  image: string | null;
  network: string;
  idle_timeout_seconds: number;
  warm_pool_size: number | null;
  resources: { memory_mb: number; cpus: number; pids: number };
};

export type Environment = {
  id: string;
  type: 'environment';
  name: string;
  description: string | null;
  config: EnvironmentConfig;
  created_at: string;
  updated_at: string;
  archived_at: string | null;
};

export const SESSION_STATUSES = ['idle', 'running', 'rescheduling', 'terminated'] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];

export type Session = {
  id: string;
  type: 'session';
  title: string | null;
  status: SessionStatus;
  agent: { id: string; name?: string; version?: number };
  environment_id: string;
  created_at: string;
  updated_at: string;
  archived_at: string | null;
  resources?: SessionResource[];
  /**
   * Berth's own fields (`paused`: the sandbox is released on request; the next message or a resume
   * brings it back; `imported_from`: the exported session this one was imported from;
   * `forked_from`: the session and turn this one was forked from).
   */
  berth?: { paused?: boolean; imported_from?: { session_id: string; exported_at: string } | null; forked_from?: { session_id: string; turn_id: string } | null };
};

export type SessionResource =
  | { type: 'file'; id: string; file_id: string; mount_path: string }
  | { type: 'github_repository'; id: string; url: string; mount_path: string; checkout: { type: 'branch'; name: string } | { type: 'commit'; sha: string } | null };

/** `BetaFileMetadata`: an upload, or an output a session wrote (`scope`). */
export type FileMetadata = { id: string; filename: string; mime_type: string; size_bytes: number; created_at: string; scope: { type: 'session'; id: string } | null };

/** One entry of a workspace directory listing (Berth). */
export type WorkspaceEntry = { path: string; type: 'file' | 'directory' | 'symlink'; size: number; modified_at: string };

/** Every event the API renders: `id`, `type`, `processed_at`, then the type's own fields. */
export type PublicEvent = { id: string; type: string; processed_at: string | null } & Record<string, unknown>;

export type ApiErrorBody = { type: 'error'; error: { type: string; message: string; code?: string } };

/** Berth's webhook endpoints (`/v1/webhooks`); `signing_secret` only in the create and rotate answers. */
export type WebhookEndpoint = {
  id: string;
  url: string;
  name: string;
  enabled_events: string[];
  state: 'enabled' | 'disabled';
  disabled_reason: string;
  /** Since when every attempt has failed, and when it is tried next; null while it answers. */
  failing_since: string | null;
  next_retry_at: string | null;
  created_at: string;
  signing_secret?: string;
};

export type WebhookDelivery = {
  id: string;
  event_id: string;
  event_type: string;
  state: 'pending' | 'delivered' | 'failed';
  attempt_count: number;
  attempts: { attempted_at: string; status_code: number | null; error: string | null; duration_ms: number }[];
  next_attempt_at: string | null;
  redelivery_of: string | null;
  created_at: string;
};

/** The event types an endpoint can subscribe to: session events and configuration changes (the gateway refuses others). */
export const WEBHOOK_EVENT_TYPES = [
  'session.created',
  'session.updated',
  'session.running',
  'session.idled',
  'session.requires_action',
  'session.archived',
  'session.deleted',
  'session.status_run_started',
  'session.status_idled',
  'session.status_rescheduled',
  'session.status_terminated',
  'session.error',
  'agent.created',
  'agent.updated',
  'agent.archived',
  'environment.created',
  'environment.updated',
  'environment.archived',
  'environment.deleted',
  'vault.created',
  'vault.archived',
  'vault.deleted',
  'vault_credential.created',
  'vault_credential.archived',
  'vault_credential.deleted',
  'vault_credential.refresh_failed',
] as const;

export type Vault = { id: string; display_name: string; created_at: string; archived_at: string | null };

/** Where Berth's refreshing of an mcp_oauth token stands (`berth.refresh`). */
export type CredentialRefreshState = {
  status: 'scheduled' | 'retrying' | 'failed';
  next_attempt_at: string | null;
  last_attempt_at: string | null;
  last_refreshed_at: string | null;
  last_error: string | null;
};

/** A credential as the API shows it: never its secret. */
export type VaultCredential = {
  id: string;
  vault_id: string;
  display_name: string | null;
  auth: {
    type: 'static_bearer' | 'mcp_oauth' | 'environment_variable';
    mcp_server_url?: string;
    expires_at?: string | null;
    /** An mcp_oauth credential Berth refreshes: where and as which client (never the refresh token or client secret). */
    refresh?: { token_endpoint: string; client_id: string; token_endpoint_auth: { type: string }; scope?: string | null } | null;
    secret_name?: string;
    networking?: { type: string; allowed_hosts?: string[] };
  };
  berth?: { refresh: CredentialRefreshState | null };
  created_at: string;
  archived_at: string | null;
};
