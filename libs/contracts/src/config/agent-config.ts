import { z } from 'zod';
import { MetadataPatchSchema, MetadataSchema, patchMetadata } from './metadata';

/**
 * The agent: the Managed Agents request shapes the API accepts (`…ParamsSchema`), and the one
 * normalized shape it stores, returns and every service reads (`AgentConfig`). Refusals (what
 * Berth or a harness cannot honour) are not schema errors: `agentConfigIssues` lists them, so the
 * API refuses new input and a stored version alike, with the same field paths.
 */

/** The tools of the `agent_toolset_20260401` toolset. */
export const AGENT_TOOL_NAMES = ['bash', 'edit', 'read', 'write', 'glob', 'grep', 'web_fetch', 'web_search'] as const;
export const AgentToolNameSchema = z.enum(AGENT_TOOL_NAMES);
export type AgentToolName = z.infer<typeof AgentToolNameSchema>;

export const AGENT_TOOLSET = 'agent_toolset_20260401';

export const PermissionPolicySchema = z.strictObject({ type: z.enum(['always_allow', 'always_ask', 'auto']) });
export type PermissionPolicy = z.infer<typeof PermissionPolicySchema>;
export type PermissionPolicyType = PermissionPolicy['type'];

export const EFFORT_LEVELS = ['low', 'medium', 'high', 'xhigh', 'max'] as const;
export const EffortSchema = z.enum(EFFORT_LEVELS);
export type Effort = z.infer<typeof EffortSchema>;

const domains = z.array(z.string().min(1).max(253)).min(1).max(64);

/** `web_fetch` / `web_search` options of the Managed Agents API (no harness applies them yet: see `agentConfigIssues`). */
const WebToolOptionsShape = {
  allowed_domains: domains.optional(),
  blocked_domains: domains.optional(),
  max_content_tokens: z.number().int().positive().nullish(),
  url_sources: z.record(z.string(), z.unknown()).nullish(),
  user_location: z.record(z.string(), z.unknown()).nullish(),
};
export const WEB_TOOL_OPTIONS = Object.keys(WebToolOptionsShape) as readonly (keyof typeof WebToolOptionsShape)[];

const ToolsetDefaultParamsSchema = z.strictObject({ enabled: z.boolean().nullish(), permission_policy: PermissionPolicySchema.nullish() });

const AgentToolConfigParamsSchema = z
  .strictObject({
    name: AgentToolNameSchema,
    type: AgentToolNameSchema.optional(),
    enabled: z.boolean().nullish(),
    permission_policy: PermissionPolicySchema.nullish(),
    ...WebToolOptionsShape,
  })
  .refine((c) => c.type === undefined || c.type === c.name, { message: 'must equal name', path: ['type'] });

const McpToolConfigParamsSchema = z.strictObject({
  name: z.string().min(1).max(128),
  enabled: z.boolean().nullish(),
  permission_policy: PermissionPolicySchema.nullish(),
});

/** Harnesses name an MCP tool `mcp__<server>__<tool>`: a server name is letters, digits, hyphens and single underscores. */
const McpServerNameSchema = z
  .string()
  .max(64)
  .regex(/^[A-Za-z0-9-]+(_[A-Za-z0-9-]+)*$/, 'must be 1-64 letters, digits, hyphens or single underscores (harnesses name its tools mcp__<server>__<tool>)');
const CustomToolNameSchema = z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, 'must be 1-128 letters, digits, underscores or hyphens');
const InputSchemaSchema = z.looseObject({ type: z.literal('object') });

export const ToolParamsSchema = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal(AGENT_TOOLSET),
    default_config: ToolsetDefaultParamsSchema.nullish(),
    configs: z.array(AgentToolConfigParamsSchema).max(64).optional(),
  }),
  z.strictObject({
    type: z.literal('mcp_toolset'),
    mcp_server_name: McpServerNameSchema,
    default_config: ToolsetDefaultParamsSchema.nullish(),
    configs: z.array(McpToolConfigParamsSchema).max(256).optional(),
  }),
  z.strictObject({ type: z.literal('custom'), name: CustomToolNameSchema, description: z.string().max(10_000), input_schema: InputSchemaSchema }),
]);

export const McpServerSchema = z.strictObject({
  type: z.literal('url'),
  name: McpServerNameSchema,
  url: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).max(2048),
});
export type McpServer = z.infer<typeof McpServerSchema>;

const SkillParamsSchema = z.strictObject({ type: z.enum(['anthropic', 'custom']), skill_id: z.string().min(1).max(256), version: z.string().max(64).nullish() });

export const ModelParamsSchema = z.union([
  z.string().min(1).max(256),
  z.strictObject({
    id: z.string().min(1).max(256),
    effort: z.union([EffortSchema, z.strictObject({ type: EffortSchema })]).nullish(),
    inference_geo: z.string().max(64).nullish(),
    speed: z.enum(['standard', 'fast']).nullish(),
  }),
]);

const ExecutionIdentitySchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('service_account') }),
  z.strictObject({ type: z.literal('aws_role'), role_arn: z.string().min(1).max(2048) }),
]);

const SHARED_PARAMS = {
  description: z.string().max(2048).nullish(),
  system: z.string().max(100_000).nullish(),
  execution_identity: ExecutionIdentitySchema.nullish(),
  multiagent: z.record(z.string(), z.unknown()).nullish(),
};

/** `POST /v1/agents`. */
export const AgentCreateParamsSchema = z.strictObject({
  name: z.string().min(1).max(256),
  model: ModelParamsSchema,
  ...SHARED_PARAMS,
  tools: z.array(ToolParamsSchema).max(128).optional(),
  mcp_servers: z.array(McpServerSchema).max(20).optional(),
  skills: z.array(SkillParamsSchema).max(20).optional(),
  metadata: MetadataSchema.optional(),
});
export type AgentCreateParams = z.infer<typeof AgentCreateParamsSchema>;

/** `POST /v1/agents/{id}`: omitted fields keep their value, null clears, metadata is a patch. */
export const AgentUpdateParamsSchema = z.strictObject({
  name: z.string().min(1).max(256).optional(),
  model: ModelParamsSchema.optional(),
  ...SHARED_PARAMS,
  tools: z.array(ToolParamsSchema).max(128).nullish(),
  mcp_servers: z.array(McpServerSchema).max(20).nullish(),
  skills: z.array(SkillParamsSchema).max(20).nullish(),
  metadata: MetadataPatchSchema.nullish(),
  /** Optimistic concurrency: the update applies only when this is the current version. */
  version: z.number().int().positive().optional(),
});
export type AgentUpdateParams = z.infer<typeof AgentUpdateParamsSchema>;

// ---- The stored (and returned, and read) shape. Lenient where older versions may differ: refusals are issues, not parse errors.

const ToolsetDefaultSchema = z.object({ enabled: z.boolean(), permission_policy: PermissionPolicySchema });
export type ToolsetDefault = z.infer<typeof ToolsetDefaultSchema>;

export const AgentToolsetSchema = z.object({
  type: z.literal(AGENT_TOOLSET),
  default_config: ToolsetDefaultSchema,
  configs: z.array(
    z.object({ name: z.string(), type: z.string(), enabled: z.boolean(), permission_policy: PermissionPolicySchema, ...WebToolOptionsShape }),
  ),
});
export type AgentToolset = z.infer<typeof AgentToolsetSchema>;

export const McpToolsetSchema = z.object({
  type: z.literal('mcp_toolset'),
  mcp_server_name: z.string(),
  default_config: ToolsetDefaultSchema,
  configs: z.array(z.object({ name: z.string(), enabled: z.boolean(), permission_policy: PermissionPolicySchema })),
});
export type McpToolset = z.infer<typeof McpToolsetSchema>;

const CustomToolSchema = z.object({ type: z.literal('custom'), name: z.string(), description: z.string(), input_schema: z.looseObject({}) });

export const AgentConfigSchema = z.object({
  description: z.string().nullable(),
  execution_identity: z.looseObject({ type: z.string() }),
  mcp_servers: z.array(z.object({ type: z.literal('url'), name: z.string(), url: z.string() })),
  metadata: z.record(z.string(), z.string()),
  model: z.object({ id: z.string(), effort: z.object({ type: EffortSchema }).optional(), inference_geo: z.string().optional(), speed: z.enum(['standard', 'fast']).optional() }),
  multiagent: z.record(z.string(), z.unknown()).nullable(),
  skills: z.array(z.object({ type: z.string(), skill_id: z.string(), version: z.string() })),
  system: z.string().nullable(),
  tools: z.array(z.discriminatedUnion('type', [AgentToolsetSchema, McpToolsetSchema, CustomToolSchema])),
});
/** The versioned part of an agent, as stored, returned by the API and read by every service. */
export type AgentConfig = z.infer<typeof AgentConfigSchema>;

const ALLOW: PermissionPolicy = { type: 'always_allow' };
const SERVICE_ACCOUNT = { type: 'service_account' } as const;

function normalizeModel(model: z.infer<typeof ModelParamsSchema>): AgentConfig['model'] {
  if (typeof model === 'string') return { id: model };
  const effort = typeof model.effort === 'string' ? { type: model.effort } : (model.effort ?? undefined);
  return {
    id: model.id,
    ...(effort ? { effort } : {}),
    ...(model.inference_geo ? { inference_geo: model.inference_geo } : {}),
    ...(model.speed ? { speed: model.speed } : {}),
  };
}

const withoutNullish = <T extends Record<string, unknown>>(o: T): Partial<T> =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null && v !== undefined)) as Partial<T>;

function normalizeTool(tool: z.infer<typeof ToolParamsSchema>): AgentConfig['tools'][number] {
  if (tool.type === 'custom') return tool;
  const default_config: ToolsetDefault = { enabled: tool.default_config?.enabled ?? true, permission_policy: tool.default_config?.permission_policy ?? ALLOW };
  const grant = (c: { enabled?: boolean | null; permission_policy?: PermissionPolicy | null }) => ({
    enabled: c.enabled ?? default_config.enabled,
    permission_policy: c.permission_policy ?? default_config.permission_policy,
  });
  if (tool.type === 'mcp_toolset') {
    return { type: 'mcp_toolset', mcp_server_name: tool.mcp_server_name, default_config, configs: (tool.configs ?? []).map((c) => ({ name: c.name, ...grant(c) })) };
  }
  const configs = (tool.configs ?? []).map(({ name, type: _type, enabled, permission_policy, ...options }) => ({
    name,
    type: name,
    ...grant({ enabled, permission_policy }),
    ...withoutNullish(options),
  }));
  return { type: AGENT_TOOLSET, default_config, configs };
}

const normalizeSkills = (skills: readonly z.infer<typeof SkillParamsSchema>[] | null | undefined): AgentConfig['skills'] =>
  (skills ?? []).map((s) => ({ type: s.type, skill_id: s.skill_id, version: s.version ?? 'latest' }));

/** Version 1 of an agent. */
export function agentConfigFromCreate(params: AgentCreateParams): AgentConfig {
  return {
    description: params.description ?? null,
    execution_identity: params.execution_identity ?? SERVICE_ACCOUNT,
    mcp_servers: params.mcp_servers ?? [],
    metadata: params.metadata ?? {},
    model: normalizeModel(params.model),
    multiagent: params.multiagent ?? null,
    skills: normalizeSkills(params.skills),
    system: params.system || null,
    tools: (params.tools ?? []).map(normalizeTool),
  };
}

/** The next version's config: omitted fields keep their value, null (or an empty string or list) clears. */
export function agentConfigAfterUpdate(current: AgentConfig, params: AgentUpdateParams): AgentConfig {
  const pick = <T>(value: T | null | undefined, cleared: T, keep: T): T => (value === undefined ? keep : value === null ? cleared : value);
  return {
    description: params.description === undefined ? current.description : params.description || null,
    execution_identity: pick(params.execution_identity, SERVICE_ACCOUNT, current.execution_identity),
    mcp_servers: pick(params.mcp_servers, [], current.mcp_servers),
    metadata: params.metadata === null ? {} : patchMetadata(current.metadata, params.metadata),
    model: params.model === undefined ? current.model : normalizeModel(params.model),
    multiagent: pick(params.multiagent, null, current.multiagent),
    skills: params.skills === undefined ? current.skills : normalizeSkills(params.skills),
    system: params.system === undefined ? current.system : params.system || null,
    tools: params.tools === undefined ? current.tools : (params.tools ?? []).map(normalizeTool),
  };
}

/** A stored agent config, typed. Stored versions are normalized, so this only checks the shape. */
export const readAgentConfig = (stored: unknown): AgentConfig => AgentConfigSchema.parse(stored);
