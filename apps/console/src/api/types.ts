/**
 * The slice of the Managed Agents API (plus Berth's extensions) the console reads. The full
 * shapes are the official SDK's `resources/beta/{agents,environments,sessions}` types; fields the
 * console never shows are left out on purpose.
 */

export type Page<T> = { data: T[]; next_page: string | null; prev_page?: string | null };

export type Agent = {
  id: string;
  type: 'agent';
  name: string;
  description: string | null;
  system: string | null;
  model: { id: string } | string;
  version: number;
  created_at: string;
  updated_at: string;
  archived_at: string | null;
};

export const HARNESSES = ['claude-code', 'codex', 'pi', 'hermes', 'deepseek-harness'] as const;
export type Harness = (typeof HARNESSES)[number];
export type PermissionMode = 'always_allow' | 'always_ask';

/** Managed Agents `config` plus Berth's sandbox settings. */
export type EnvironmentConfig = {
  type?: string;
  harness?: Harness;
  image?: string | null;
  network?: string;
  idle_timeout_seconds?: number;
  permission_mode?: PermissionMode;
  resources?: Record<string, unknown>;
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
};

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

/** The session event types an endpoint can subscribe to (the gateway refuses others). */
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
] as const;

export type Vault = { id: string; display_name: string; created_at: string; archived_at: string | null };

/** A credential as the API shows it: never its secret. */
export type VaultCredential = {
  id: string;
  vault_id: string;
  display_name: string | null;
  auth: { type: 'static_bearer' | 'mcp_oauth' | 'environment_variable'; mcp_server_url?: string; secret_name?: string; networking?: { type: string; allowed_hosts?: string[] } };
  created_at: string;
  archived_at: string | null;
};
