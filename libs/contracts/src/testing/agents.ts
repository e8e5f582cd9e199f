import { AGENT_TOOLSET, agentConfigFromCreate, type AgentConfig, type AgentCreateParams } from '../config';

/** An agent config as the API stores it: the whole built-in toolset (always_allow) unless `params` says otherwise. */
export function testAgentConfig(params: Partial<AgentCreateParams> = {}): AgentConfig {
  return agentConfigFromCreate({ name: 'test-agent', model: 'claude-sonnet-4-5', tools: [{ type: AGENT_TOOLSET }], ...params });
}
