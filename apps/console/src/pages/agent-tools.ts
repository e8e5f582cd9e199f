import { AGENT_TOOLS, type Agent, type AgentTool, type AgentToolName, type McpServer, type ToolGrantConfig, type ToolsetDefault } from '../api/types';

/** One built-in tool as the form edits it. */
export type ToolChoice = { enabled: boolean; ask: boolean };
/** One MCP server as the form edits it; `configs` carries per-tool entries the form does not show. */
export type McpChoice = { name: string; url: string; ask: boolean; enabled: boolean; configs: ToolGrantConfig[] };
export type ToolsForm = { toolset: boolean; builtin: Record<AgentToolName, ToolChoice>; mcp: McpChoice[] };

const ALLOW = { type: 'always_allow' } as const;
const ASK = { type: 'always_ask' } as const;

/** The form's view of an agent's tools: each tool's own entry, else the toolset default (a new agent gets the whole toolset). */
export function toolsFormOf(agent: Agent | null): ToolsForm {
  const toolset = agent?.tools.find((t) => t.type === 'agent_toolset_20260401');
  const builtin = Object.fromEntries(
    AGENT_TOOLS.map((name) => {
      if (toolset?.type !== 'agent_toolset_20260401') return [name, { enabled: true, ask: false }];
      const grant = toolset.configs.find((c) => c.name === name) ?? toolset.default_config;
      return [name, { enabled: grant.enabled, ask: grant.permission_policy.type === 'always_ask' }];
    }),
  ) as Record<AgentToolName, ToolChoice>;
  const mcp = (agent?.mcp_servers ?? []).map((server): McpChoice => {
    const set = agent?.tools.find((t) => t.type === 'mcp_toolset' && t.mcp_server_name === server.name);
    const d: ToolsetDefault = set?.type === 'mcp_toolset' ? set.default_config : { enabled: true, permission_policy: ALLOW };
    return { name: server.name, url: server.url, ask: d.permission_policy.type === 'always_ask', enabled: d.enabled, configs: set?.type === 'mcp_toolset' ? set.configs : [] };
  });
  return { toolset: agent === null || toolset !== undefined, builtin, mcp };
}

/** The request's `tools` and `mcp_servers`: every built-in tool spelled out, one mcp_toolset per server. */
export function toolsOfForm(form: ToolsForm): { tools: AgentTool[]; mcp_servers: McpServer[] } {
  const servers = form.mcp.filter((s) => s.name.trim() !== '' && s.url.trim() !== '');
  const toolset: AgentTool = {
    type: 'agent_toolset_20260401',
    default_config: { enabled: true, permission_policy: ALLOW },
    configs: AGENT_TOOLS.map((name) => ({ name, enabled: form.builtin[name].enabled, permission_policy: form.builtin[name].ask ? ASK : ALLOW })),
  };
  const mcpToolsets: AgentTool[] = servers.map((s) => ({
    type: 'mcp_toolset',
    mcp_server_name: s.name.trim(),
    default_config: { enabled: s.enabled, permission_policy: s.ask ? ASK : ALLOW },
    configs: s.configs,
  }));
  return { tools: [...(form.toolset ? [toolset] : []), ...mcpToolsets], mcp_servers: servers.map((s) => ({ type: 'url', name: s.name.trim(), url: s.url.trim() })) };
}

/** `8 tools, bash asks · MCP: docs`, for the agents table. */
export function toolsSummary(agent: Agent): string {
  const form = toolsFormOf(agent);
  const enabled = form.toolset ? AGENT_TOOLS.filter((n) => form.builtin[n].enabled) : [];
  const asking = enabled.filter((n) => form.builtin[n].ask);
  const builtin = enabled.length === 0 ? 'no built-in tools' : `${enabled.length} tools${asking.length > 0 ? `, ${asking.join(', ')} ask${asking.length === 1 ? 's' : ''}` : ''}`;
  return form.mcp.length === 0 ? builtin : `${builtin} · MCP: ${form.mcp.map((s) => s.name).join(', ')}`;
}
