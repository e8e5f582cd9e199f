import type {
  Agent,
  AgentTool,
  ApiErrorBody,
  Environment,
  EnvironmentConfig,
  FileMetadata,
  McpServer,
  Page,
  PublicEvent,
  Session,
  SessionStatus,
  Vault,
  VaultCredential,
  WebhookDelivery,
  WebhookEndpoint,
  WorkspaceEntry,
} from './types';

export type ApiConfig = { baseUrl: string; apiKey: string };

/** An error the API answered with (or a network failure, status 0), with its stable code. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
    readonly code: string | null = null,
  ) {
    super(message);
  }
}

export type SessionFilters = { status?: SessionStatus | ''; agentId?: string; includeArchived?: boolean };

export type AgentInput = { name: string; model: string; system?: string; description?: string; tools: AgentTool[]; mcp_servers: McpServer[] };
/** The `config` fields a form sends: an update changes those given and keeps the others. */
export type EnvironmentInput = { name: string; description?: string; config: Partial<EnvironmentConfig> & { type: EnvironmentConfig['type'] } };
export type ResourceInput = { type: 'file'; file_id: string } | { type: 'github_repository'; url: string; checkout?: { type: 'branch'; name: string } | { type: 'commit'; sha: string } };
export type SessionInput = { agentId: string; environmentId: string; title?: string; firstMessage?: string; resources?: ResourceInput[]; vaultIds?: string[] };
export type CredentialInput = { displayName?: string } & ({ kind: 'mcp'; mcpServerUrl: string; token: string } | { kind: 'variable'; secretName: string; secretValue: string; hosts: string[] });

export function apiHeaders(apiKey: string): Record<string, string> {
  return { 'x-api-key': apiKey, 'anthropic-version': '2023-06-01', 'anthropic-beta': 'managed-agents-2026-04-01' };
}

export function createApi({ baseUrl, apiKey }: ApiConfig) {
  const root = baseUrl.replace(/\/+$/, '');

  /** The answer when it is a success; the API's error (or a connection failure) otherwise. */
  async function send(method: string, path: string, body?: BodyInit, contentType?: string): Promise<Response> {
    let res: Response;
    try {
      res = await fetch(root + path, { method, headers: { ...apiHeaders(apiKey), ...(contentType ? { 'content-type': contentType } : {}) }, body });
    } catch (e) {
      throw new ApiError(0, 'connection_error', `Cannot reach the API at ${root || window.location.origin}: ${(e as Error).message}`);
    }
    if (res.ok) return res;
    const text = await res.text();
    const err = ((text ? safeJson(text) : null) as ApiErrorBody | null)?.error;
    throw new ApiError(res.status, err?.type ?? 'api_error', err?.message ?? `HTTP ${res.status}`, err?.code ?? null);
  }

  async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await send(method, path, body === undefined ? undefined : JSON.stringify(body), body === undefined ? undefined : 'application/json');
    const text = await res.text();
    return (text ? safeJson(text) : null) as T;
  }

  /** Bytes the API serves behind the key (a file, an archive): fetched, then handed to the browser as a Blob. */
  const blob = async (path: string) => (await send('GET', path)).blob();

  const text = (t: string) => [{ type: 'text', text: t }];
  const qs = (params: Record<string, string | undefined>) => {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.append(k, v);
    const s = q.toString();
    return s ? `?${s}` : '';
  };

  return {
    listAgents: (includeArchived = false) => call<Page<Agent>>('GET', `/v1/agents${qs({ limit: '100', include_archived: includeArchived ? 'true' : undefined })}`),
    createAgent: (a: AgentInput) =>
      call<Agent>('POST', '/v1/agents', { name: a.name, model: a.model, system: a.system || null, description: a.description || null, tools: a.tools, mcp_servers: a.mcp_servers }),
    updateAgent: (id: string, version: number, a: AgentInput) =>
      call<Agent>('POST', `/v1/agents/${id}`, { version, name: a.name, model: a.model, system: a.system || null, description: a.description || null, tools: a.tools, mcp_servers: a.mcp_servers }),
    archiveAgent: (id: string) => call<Agent>('POST', `/v1/agents/${id}/archive`),

    listEnvironments: (includeArchived = false) => call<Page<Environment>>('GET', `/v1/environments${qs({ limit: '100', include_archived: includeArchived ? 'true' : undefined })}`),
    createEnvironment: (e: EnvironmentInput) => call<Environment>('POST', '/v1/environments', { name: e.name, description: e.description || null, config: e.config }),
    updateEnvironment: (id: string, e: EnvironmentInput) => call<Environment>('POST', `/v1/environments/${id}`, { name: e.name, description: e.description || null, config: e.config }),
    archiveEnvironment: (id: string) => call<Environment>('POST', `/v1/environments/${id}/archive`),

    listSessions: (f: SessionFilters) =>
      call<Page<Session>>(
        'GET',
        `/v1/sessions${qs({ limit: '100', order: 'desc', 'statuses[]': f.status || undefined, agent_id: f.agentId, include_archived: f.includeArchived ? 'true' : undefined })}`,
      ),
    getSession: (id: string) => call<Session>('GET', `/v1/sessions/${id}`),
    createSession: (s: SessionInput) =>
      call<Session>('POST', '/v1/sessions', {
        agent: s.agentId,
        environment_id: s.environmentId,
        title: s.title || null,
        ...(s.firstMessage ? { initial_events: [{ type: 'user.message', content: text(s.firstMessage) }] } : {}),
        ...(s.resources && s.resources.length > 0 ? { resources: s.resources } : {}),
        ...(s.vaultIds && s.vaultIds.length > 0 ? { vault_ids: s.vaultIds } : {}),
      }),
    uploadFile: async (file: File) => {
      const form = new FormData();
      form.append('file', file, file.name);
      return (await (await send('POST', '/v1/files', form)).json()) as FileMetadata;
    },
    listSessionFiles: (id: string) => call<Page<FileMetadata>>('GET', `/v1/files${qs({ scope_id: id, limit: '100' })}`),
    fileContent: (id: string) => blob(`/v1/files/${id}/content`),
    workspaceEntries: (id: string, path: string) => call<{ path: string; data: WorkspaceEntry[]; truncated: boolean }>('GET', `/v1/sessions/${id}/workspace/entries${qs({ path })}`),
    workspaceFile: (id: string, path: string) => blob(`/v1/sessions/${id}/workspace/file${qs({ path })}`),
    workspaceArchive: (id: string) => blob(`/v1/sessions/${id}/workspace`),
    archiveSession: (id: string) => call<Session>('POST', `/v1/sessions/${id}/archive`),
    sendMessage: (id: string, message: string) => call<{ data: PublicEvent[] }>('POST', `/v1/sessions/${id}/events`, { events: [{ type: 'user.message', content: text(message) }] }),
    interrupt: (id: string) => call<{ data: PublicEvent[] }>('POST', `/v1/sessions/${id}/events`, { events: [{ type: 'user.interrupt' }] }),
    confirmTool: (id: string, toolUseId: string, result: 'allow' | 'deny', denyMessage?: string) =>
      call<{ data: PublicEvent[] }>('POST', `/v1/sessions/${id}/events`, {
        events: [{ type: 'user.tool_confirmation', tool_use_id: toolUseId, result, ...(result === 'deny' && denyMessage ? { deny_message: denyMessage } : {}) }],
      }),
    customToolResult: (id: string, customToolUseId: string, result: string, isError: boolean) =>
      call<{ data: PublicEvent[] }>('POST', `/v1/sessions/${id}/events`, {
        events: [{ type: 'user.custom_tool_result', custom_tool_use_id: customToolUseId, content: text(result), is_error: isError }],
      }),
    recover: (id: string) => call<unknown>('POST', `/v1/sessions/${id}/recover`),
    terminate: (id: string) => call<unknown>('POST', `/v1/sessions/${id}/terminate`),
    pause: (id: string) => call<Session>('POST', `/v1/sessions/${id}/pause`),
    resume: (id: string) => call<Session>('POST', `/v1/sessions/${id}/resume`),
    /** The session as one archive (`GET …/export`), to save or import elsewhere. */
    exportSession: (id: string) => blob(`/v1/sessions/${id}/export`),
    /** An exported session recreated under this key, with new ids (the archive file as the body). */
    importSession: async (archive: Blob) => (await (await send('POST', '/v1/sessions/import', archive, 'application/x-tar')).json()) as Session,
    /** A new session continuing from the end of the turn this `user.message` started. */
    fork: (id: string, eventId: string) => call<Session>('POST', `/v1/sessions/${id}/fork`, { event_id: eventId }),

    listWebhooks: () => call<Page<WebhookEndpoint>>('GET', '/v1/webhooks?limit=100'),
    createWebhook: (w: { url: string; name?: string; events: string[] }) => call<WebhookEndpoint>('POST', '/v1/webhooks', { url: w.url, name: w.name || undefined, enabled_events: w.events }),
    setWebhookState: (id: string, state: 'enabled' | 'disabled') => call<WebhookEndpoint>('POST', `/v1/webhooks/${id}`, { state }),
    deleteWebhook: (id: string) => call<unknown>('DELETE', `/v1/webhooks/${id}`),
    listDeliveries: (id: string) => call<Page<WebhookDelivery>>('GET', `/v1/webhooks/${id}/deliveries?limit=50`),
    redeliver: (id: string, deliveryId: string) => call<WebhookDelivery>('POST', `/v1/webhooks/${id}/deliveries/${deliveryId}/redeliver`),

    listVaults: () => call<Page<Vault>>('GET', '/v1/vaults?limit=100'),
    createVault: (displayName: string) => call<Vault>('POST', '/v1/vaults', { display_name: displayName }),
    archiveVault: (id: string) => call<Vault>('POST', `/v1/vaults/${id}/archive`),
    listCredentials: (vaultId: string) => call<Page<VaultCredential>>('GET', `/v1/vaults/${vaultId}/credentials?limit=100`),
    createCredential: (vaultId: string, c: CredentialInput) =>
      call<VaultCredential>('POST', `/v1/vaults/${vaultId}/credentials`, {
        display_name: c.displayName || undefined,
        auth:
          c.kind === 'mcp'
            ? { type: 'static_bearer', mcp_server_url: c.mcpServerUrl, token: c.token }
            : { type: 'environment_variable', secret_name: c.secretName, secret_value: c.secretValue, networking: c.hosts.length ? { type: 'limited', allowed_hosts: c.hosts } : { type: 'unrestricted' } },
      }),
    archiveCredential: (vaultId: string, id: string) => call<VaultCredential>('POST', `/v1/vaults/${vaultId}/credentials/${id}/archive`),

    streamUrl: (id: string) => `${root}/v1/sessions/${id}/events/stream`,
    headers: () => apiHeaders(apiKey),
  };
}

export type Api = ReturnType<typeof createApi>;

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
