import type { AgentRecord } from '@berth/ports';
import { asAgentConfig } from './agent-config';

/** `BetaManagedAgentsAgent`. */
export function renderAgent(agent: AgentRecord): Record<string, unknown> {
  const c = asAgentConfig(agent.config);
  return {
    type: 'agent',
    id: agent.id,
    version: agent.version,
    name: agent.name,
    description: c.description ?? null,
    model: c.model,
    system: c.system ?? null,
    tools: c.tools ?? [],
    mcp_servers: c.mcp_servers ?? [],
    skills: c.skills ?? [],
    multiagent: c.multiagent ?? null,
    execution_identity: c.execution_identity ?? { type: 'service_account' },
    metadata: c.metadata ?? {},
    created_at: agent.created_at,
    updated_at: agent.updated_at,
    archived_at: agent.archived_at,
  };
}

/** `BetaManagedAgentsSessionAgent`: the agent version a session pinned. */
export function renderSessionAgent(agent: AgentRecord): Record<string, unknown> {
  const { created_at: _c, updated_at: _u, archived_at: _a, metadata: _m, ...rest } = renderAgent(agent);
  return rest;
}
