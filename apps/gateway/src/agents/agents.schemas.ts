import { z } from 'zod';
import { defineRoute } from '../http/route';
import { MetadataPatchSchema, MetadataSchema, PageQueryShape, QueryBool, QueryInt, QueryTime, idParam } from '../http/schemas';

const PolicySchema = z.object({ type: z.enum(['always_allow', 'always_ask', 'auto']) });
const ToolConfigSchema = z.looseObject({ name: z.string().min(1).max(128), enabled: z.boolean().nullish(), permission_policy: PolicySchema.nullish() });
const DefaultConfigSchema = z.looseObject({ enabled: z.boolean().nullish(), permission_policy: PolicySchema.nullish() });

export const ToolSchema = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('agent_toolset_20260401'), configs: z.array(ToolConfigSchema).max(128).optional(), default_config: DefaultConfigSchema.nullish() }),
  z.looseObject({ type: z.literal('mcp_toolset'), mcp_server_name: z.string().min(1).max(256), configs: z.array(ToolConfigSchema).max(128).optional(), default_config: DefaultConfigSchema.nullish() }),
  z.looseObject({ type: z.literal('custom'), name: z.string().min(1).max(128), description: z.string().max(10_000), input_schema: z.looseObject({ type: z.literal('object') }) }),
]);

export const McpServerSchema = z.object({ type: z.literal('url'), name: z.string().min(1).max(256), url: z.url().max(2048) });
export const SkillSchema = z.object({ type: z.enum(['anthropic', 'custom']), skill_id: z.string().min(1).max(256), version: z.string().max(64).nullish() });
const EffortSchema = z.enum(['low', 'medium', 'high', 'xhigh', 'max']);
export const ModelSchema = z.union([
  z.string().min(1).max(256),
  z.object({
    id: z.string().min(1).max(256),
    effort: z.union([EffortSchema, z.object({ type: EffortSchema })]).nullish(),
    inference_geo: z.string().max(64).nullish(),
    speed: z.enum(['standard', 'fast']).nullish(),
  }),
]);
const ExecutionIdentitySchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('service_account') }),
  z.object({ type: z.literal('aws_role'), role_arn: z.string().min(1).max(2048) }),
]);

const agentFields = {
  description: z.string().max(2048).nullish(),
  execution_identity: ExecutionIdentitySchema.nullish(),
  system: z.string().max(100_000).nullish(),
  multiagent: z.record(z.string(), z.unknown()).nullish(),
};

export const AgentCreateBody = z.object({
  name: z.string().min(1).max(256),
  model: ModelSchema,
  ...agentFields,
  mcp_servers: z.array(McpServerSchema).max(20).optional(),
  skills: z.array(SkillSchema).max(20).optional(),
  tools: z.array(ToolSchema).max(128).optional(),
  metadata: MetadataSchema.optional(),
});

export const AgentUpdateBody = z.object({
  name: z.string().min(1).max(256).optional(),
  model: ModelSchema.optional(),
  ...agentFields,
  mcp_servers: z.array(McpServerSchema).max(20).nullish(),
  skills: z.array(SkillSchema).max(20).nullish(),
  tools: z.array(ToolSchema).max(128).nullish(),
  metadata: MetadataPatchSchema.nullish(),
  /** Optimistic concurrency: the update applies only when this is the current version. */
  version: z.number().int().positive().optional(),
});

const AgentIdParams = z.object({ agent_id: idParam('agent_id', 'agent') });

export const AgentRoutes = {
  create: defineRoute({ method: 'POST', path: '/v1/agents', tag: 'agents', summary: 'Create an agent (version 1)', body: AgentCreateBody }),
  list: defineRoute({
    method: 'GET',
    path: '/v1/agents',
    tag: 'agents',
    summary: 'List agents',
    query: z.object({ ...PageQueryShape, include_archived: QueryBool.optional(), 'created_at[gte]': QueryTime.optional(), 'created_at[lte]': QueryTime.optional() }),
  }),
  get: defineRoute({ method: 'GET', path: '/v1/agents/{agent_id}', tag: 'agents', summary: 'Retrieve an agent (latest or `?version=N`)', params: AgentIdParams, query: z.object({ version: QueryInt(1, 1_000_000).optional() }) }),
  update: defineRoute({ method: 'POST', path: '/v1/agents/{agent_id}', tag: 'agents', summary: 'Update an agent (creates a new version)', params: AgentIdParams, body: AgentUpdateBody }),
  archive: defineRoute({ method: 'POST', path: '/v1/agents/{agent_id}/archive', tag: 'agents', summary: 'Archive an agent', params: AgentIdParams }),
  versions: defineRoute({ method: 'GET', path: '/v1/agents/{agent_id}/versions', tag: 'agents', summary: 'List the versions of an agent', params: AgentIdParams, query: z.object(PageQueryShape) }),
} as const;
