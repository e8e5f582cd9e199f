import type { PermissionMode } from '../content';
import { AGENT_TOOL_NAMES, AGENT_TOOLSET, type AgentConfig, type AgentToolName, type PermissionPolicyType } from './agent-config';

/** Whether one tool is offered to the model, and whether its calls wait for `user.tool_confirmation`. */
export type ToolGrant = Readonly<{ enabled: boolean; policy: PermissionPolicyType }>;

/** One toolset tool as the agent resolves it, with the config path a refusal names. */
export type ResolvedTool = ToolGrant & Readonly<{ name: AgentToolName; explicit: boolean; path: string }>;

export type ResolvedMcpServer = Readonly<{
  name: string;
  url: string;
  /** What tools without a `configs` entry get; `defaultPath` is where that came from. */
  default: ToolGrant;
  defaultPath: string;
  /** Tools named in `configs`, by MCP tool name. */
  tools: Readonly<Record<string, ToolGrant & Readonly<{ path: string }>>>;
}>;

export type ResolvedAgentTools = Readonly<{
  builtin: Readonly<Record<AgentToolName, ResolvedTool>>;
  /** MCP servers that an `mcp_toolset` references (an unreferenced server is refused). */
  mcp: readonly ResolvedMcpServer[];
}>;

/**
 * What the agent's `tools` mean for a turn: every toolset tool enabled or not, with its policy
 * (`configs` entry first, then `default_config`; no `agent_toolset_20260401` means no built-in
 * tools), and each MCP server with its default and per-tool grants.
 */
export function resolveAgentTools(agent: AgentConfig): ResolvedAgentTools {
  const index = agent.tools.findIndex((t) => t.type === AGENT_TOOLSET);
  const toolset = agent.tools[index];
  const builtin = {} as Record<AgentToolName, ResolvedTool>;
  for (const name of AGENT_TOOL_NAMES) {
    if (toolset?.type !== AGENT_TOOLSET) {
      builtin[name] = { name, enabled: false, policy: 'always_allow', explicit: false, path: 'tools' };
      continue;
    }
    const at = toolset.configs.findIndex((c) => c.name === name);
    const config = toolset.configs[at];
    builtin[name] = config
      ? { name, enabled: config.enabled, policy: config.permission_policy.type, explicit: true, path: `tools.${index}.configs.${at}` }
      : { name, enabled: toolset.default_config.enabled, policy: toolset.default_config.permission_policy.type, explicit: false, path: `tools.${index}.default_config` };
  }
  const mcp: ResolvedMcpServer[] = [];
  agent.tools.forEach((tool, i) => {
    if (tool.type !== 'mcp_toolset') return;
    const server = agent.mcp_servers.find((s) => s.name === tool.mcp_server_name);
    if (server === undefined || mcp.some((m) => m.name === server.name)) return;
    const tools: Record<string, ToolGrant & { path: string }> = {};
    tool.configs.forEach((c, j) => (tools[c.name] = { enabled: c.enabled, policy: c.permission_policy.type, path: `tools.${i}.configs.${j}` }));
    mcp.push({
      name: server.name,
      url: server.url,
      default: { enabled: tool.default_config.enabled, policy: tool.default_config.permission_policy.type },
      defaultPath: `tools.${i}.default_config`,
      tools,
    });
  });
  return { builtin, mcp };
}

/** An MCP server some of whose tools may be offered (the default or any per-tool entry enables one). */
export const mcpServerInUse = (server: ResolvedMcpServer): boolean => server.default.enabled || Object.values(server.tools).some((t) => t.enabled);

/** True when some enabled tool of the agent waits for `user.tool_confirmation`. */
export function agentAsksForConfirmation(tools: ResolvedAgentTools): boolean {
  const builtinAsks = Object.values(tools.builtin).some((t) => t.enabled && t.policy === 'always_ask');
  const mcpAsks = tools.mcp.some(
    (s) => (s.default.enabled && s.default.policy === 'always_ask') || Object.values(s.tools).some((t) => t.enabled && t.policy === 'always_ask'),
  );
  return builtinAsks || mcpAsks;
}

/** The session's permission mode for this agent: `always_ask` when some enabled tool waits for confirmation. */
export const permissionModeOf = (agent: AgentConfig): PermissionMode => (agentAsksForConfirmation(resolveAgentTools(agent)) ? 'always_ask' : 'always_allow');
