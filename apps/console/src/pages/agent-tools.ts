import { AGENT_TOOLS, type Agent, type AgentTool, type AgentToolName, type CustomTool, type McpServer, type ToolGrantConfig, type ToolsetDefault } from '../api/types';

/** One built-in tool as the form edits it; `options` are its other settings (a web tool's `allowed_domains`, …), kept as they were. */
export type ToolChoice = { enabled: boolean; ask: boolean; options: Record<string, unknown> };
/** One MCP server as the form edits it; `configs` carries per-tool entries the form does not show. */
export type McpChoice = { name: string; url: string; ask: boolean; enabled: boolean; configs: ToolGrantConfig[] };
/** One custom tool as the form edits it: its input schema as the JSON text typed. */
export type CustomChoice = { name: string; description: string; schema: string };
export type ToolsForm = { toolset: boolean; builtin: Record<AgentToolName, ToolChoice>; mcp: McpChoice[]; custom: CustomChoice[] };

const ALLOW = { type: 'always_allow' } as const;
const ASK = { type: 'always_ask' } as const;
const GRANT_FIELDS = new Set(['name', 'type', 'enabled', 'permission_policy']);

/** What a new custom tool's schema field starts with. */
export const EMPTY_INPUT_SCHEMA = JSON.stringify({ type: 'object', properties: {} }, null, 2);

const optionsOf = (grant: ToolGrantConfig | ToolsetDefault): Record<string, unknown> => Object.fromEntries(Object.entries(grant).filter(([k]) => !GRANT_FIELDS.has(k)));

/** The form's view of an agent's tools: each tool's own entry, else the toolset default (a new agent gets the whole toolset). */
export function toolsFormOf(agent: Agent | null): ToolsForm {
  const toolset = agent?.tools.find((t) => t.type === 'agent_toolset_20260401');
  const builtin = Object.fromEntries(
    AGENT_TOOLS.map((name) => {
      if (toolset?.type !== 'agent_toolset_20260401') return [name, { enabled: true, ask: false, options: {} }];
      const grant = toolset.configs.find((c) => c.name === name) ?? toolset.default_config;
      return [name, { enabled: grant.enabled, ask: grant.permission_policy.type === 'always_ask', options: optionsOf(grant) }];
    }),
  ) as Record<AgentToolName, ToolChoice>;
  const mcp = (agent?.mcp_servers ?? []).map((server): McpChoice => {
    const set = agent?.tools.find((t) => t.type === 'mcp_toolset' && t.mcp_server_name === server.name);
    const d: ToolsetDefault = set?.type === 'mcp_toolset' ? set.default_config : { enabled: true, permission_policy: ALLOW };
    return { name: server.name, url: server.url, ask: d.permission_policy.type === 'always_ask', enabled: d.enabled, configs: set?.type === 'mcp_toolset' ? set.configs : [] };
  });
  const custom = customToolsOf(agent).map((t): CustomChoice => ({ name: t.name, description: t.description, schema: JSON.stringify(t.input_schema, null, 2) }));
  return { toolset: agent === null || toolset !== undefined, builtin, mcp, custom };
}

/**
 * The input schema typed for a custom tool, parsed, or why it cannot be sent. Only what the
 * browser must know to send an object is checked here; the API judges the schema itself.
 */
export function parseInputSchema(text: string): { schema: Record<string, unknown> } | { error: string } {
  if (text.trim() === '') return { error: 'input_schema is empty: give a JSON Schema object, such as {"type": "object", "properties": {}}' };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { error: `input_schema is not valid JSON: ${(e as Error).message}` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { error: 'input_schema must be a JSON object (a JSON Schema with "type": "object")' };
  return { schema: value as Record<string, unknown> };
}

/**
 * The request's `tools` and `mcp_servers`: every built-in tool spelled out, one mcp_toolset per
 * server, then the custom tools. Throws a readable error naming the custom tool whose schema does
 * not parse.
 */
export function toolsOfForm(form: ToolsForm): { tools: AgentTool[]; mcp_servers: McpServer[] } {
  const servers = form.mcp.filter((s) => s.name.trim() !== '' && s.url.trim() !== '');
  const toolset: AgentTool = {
    type: 'agent_toolset_20260401',
    default_config: { enabled: true, permission_policy: ALLOW },
    configs: AGENT_TOOLS.map((name) => ({ ...form.builtin[name].options, name, enabled: form.builtin[name].enabled, permission_policy: form.builtin[name].ask ? ASK : ALLOW })),
  };
  const mcpToolsets: AgentTool[] = servers.map((s) => ({
    type: 'mcp_toolset',
    mcp_server_name: s.name.trim(),
    default_config: { enabled: s.enabled, permission_policy: s.ask ? ASK : ALLOW },
    configs: s.configs,
  }));
  const custom = form.custom.map((c, i): CustomTool => {
    const parsed = parseInputSchema(c.schema);
    if ('error' in parsed) throw new Error(`Custom tool ${c.name.trim() || `#${i + 1}`}: ${parsed.error}`);
    return { type: 'custom', name: c.name.trim(), description: c.description, input_schema: parsed.schema };
  });
  return {
    tools: [...(form.toolset ? [toolset] : []), ...mcpToolsets, ...custom],
    mcp_servers: servers.map((s) => ({ type: 'url', name: s.name.trim(), url: s.url.trim() })),
  };
}

const customToolsOf = (agent: Agent | null): CustomTool[] => (agent?.tools ?? []).filter((t): t is CustomTool => t.type === 'custom');

/** `8 tools, bash asks · MCP: docs · custom: lookup`, for the agents table. */
export function toolsSummary(agent: Agent): string {
  const form = toolsFormOf(agent);
  const enabled = form.toolset ? AGENT_TOOLS.filter((n) => form.builtin[n].enabled) : [];
  const asking = enabled.filter((n) => form.builtin[n].ask);
  const builtin = enabled.length === 0 ? 'no built-in tools' : `${enabled.length} tools${asking.length > 0 ? `, ${asking.join(', ')} ask${asking.length === 1 ? 's' : ''}` : ''}`;
  const parts = [builtin];
  if (form.mcp.length > 0) parts.push(`MCP: ${form.mcp.map((s) => s.name).join(', ')}`);
  if (form.custom.length > 0) parts.push(`custom: ${form.custom.map((t) => t.name).join(', ')}`);
  return parts.join(' · ');
}
