import { readAgentConfig } from '@berth/contracts';
import type { AgentRecord } from '@berth/ports';

/** `BetaManagedAgentsAgent`: the stored config is the returned one. */
export function renderAgent(agent: AgentRecord): Record<string, unknown> {
  const c = readAgentConfig(agent.config);
  return {
    type: 'agent',
    id: agent.id,
    version: agent.version,
    name: agent.name,
    description: c.description,
    model: c.model,
    system: c.system,
    tools: c.tools,
    mcp_servers: c.mcp_servers,
    skills: c.skills,
    multiagent: c.multiagent,
    execution_identity: c.execution_identity,
    metadata: c.metadata,
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
