import type { z } from 'zod';
import type { AgentCreateBody, AgentUpdateBody, ModelSchema, SkillSchema, ToolSchema } from './agents.schemas';

/** The versioned part of an agent, normalized to the shape the API returns. */
export type AgentConfig = Readonly<{
  description: string | null;
  execution_identity: Readonly<Record<string, unknown>>;
  mcp_servers: readonly unknown[];
  metadata: Readonly<Record<string, string>>;
  model: Readonly<Record<string, unknown>>;
  multiagent: Readonly<Record<string, unknown>> | null;
  skills: readonly unknown[];
  system: string | null;
  tools: readonly unknown[];
}>;

const dropNullish = (o: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null && v !== undefined));

export function normalizeModel(model: z.infer<typeof ModelSchema>): Record<string, unknown> {
  if (typeof model === 'string') return { id: model };
  const effort = typeof model.effort === 'string' ? { type: model.effort } : model.effort;
  return dropNullish({ id: model.id, effort, inference_geo: model.inference_geo, speed: model.speed });
}

const ALLOW = { type: 'always_allow' };

function normalizeTool(tool: z.infer<typeof ToolSchema>): Record<string, unknown> {
  if (tool.type === 'custom') return tool;
  const defaultPolicy = tool.default_config?.permission_policy ?? ALLOW;
  const default_config = { enabled: tool.default_config?.enabled ?? true, permission_policy: defaultPolicy };
  const configs = (tool.configs ?? []).map((c) => ({
    ...c,
    enabled: c.enabled ?? default_config.enabled,
    permission_policy: c.permission_policy ?? defaultPolicy,
    ...(tool.type === 'agent_toolset_20260401' ? { type: c.name } : {}),
  }));
  return { ...tool, configs, default_config };
}

const normalizeSkill = (s: z.infer<typeof SkillSchema>) => ({ type: s.type, skill_id: s.skill_id, version: s.version ?? 'latest' });

export function agentConfigFromCreate(body: z.infer<typeof AgentCreateBody>): AgentConfig {
  return {
    description: body.description ?? null,
    execution_identity: body.execution_identity ?? { type: 'service_account' },
    mcp_servers: body.mcp_servers ?? [],
    metadata: body.metadata ?? {},
    model: normalizeModel(body.model),
    multiagent: body.multiagent ?? null,
    skills: (body.skills ?? []).map(normalizeSkill),
    system: body.system ?? null,
    tools: (body.tools ?? []).map(normalizeTool),
  };
}

/** Applies an update: omitted fields keep their value, null clears, metadata is patched key by key. */
export function agentConfigAfterUpdate(current: AgentConfig, body: z.infer<typeof AgentUpdateBody>): AgentConfig {
  const metadata = { ...current.metadata };
  for (const [k, v] of Object.entries(body.metadata ?? {})) {
    if (v === null) delete metadata[k];
    else metadata[k] = v;
  }
  const pick = <T>(value: T | null | undefined, cleared: T, keep: T): T => (value === undefined ? keep : value === null ? cleared : value);
  return {
    description: pick(body.description, null, current.description),
    execution_identity: pick(body.execution_identity, { type: 'service_account' }, current.execution_identity),
    mcp_servers: pick(body.mcp_servers, [], current.mcp_servers),
    metadata: body.metadata === null ? {} : metadata,
    model: body.model === undefined ? current.model : normalizeModel(body.model),
    multiagent: pick(body.multiagent, null, current.multiagent),
    skills: body.skills === undefined ? current.skills : (body.skills ?? []).map(normalizeSkill),
    system: pick(body.system, null, current.system),
    tools: body.tools === undefined ? current.tools : (body.tools ?? []).map(normalizeTool),
  };
}

export const asAgentConfig = (config: Readonly<Record<string, unknown>>): AgentConfig => config as AgentConfig;
