import { readFileSync } from 'node:fs';
import { AGENT_TOOL_NAMES, AGENT_TOOLSET, resolveAgentTools, type AgentConfig, type AgentCreateParams } from '@berth/contracts';
import type { OptionSpec, OptionValues } from '../args';
import { UsageError } from '../exit-codes';

/** The tool options of `agents create|update`: the built-in toolset, per-tool switches and permissions, MCP servers, custom tools. */
export const TOOL_OPTIONS: Readonly<Record<string, OptionSpec>> = {
  'no-toolset': { type: 'boolean', help: 'no built-in tools (create adds the whole toolset otherwise)' },
  permission: { type: 'string', help: 'default permission of the built-in tools: allow | ask' },
  tool: { type: 'string', multiple: true, help: `NAME:off|on|ask|allow for one built-in tool (${AGENT_TOOL_NAMES.join(', ')})` },
  mcp: { type: 'string', multiple: true, help: 'NAME=URL: an MCP server (streamable HTTP) the agent may use' },
  'mcp-tool': { type: 'string', multiple: true, help: 'SERVER.TOOL:off|on|ask|allow for one tool of an MCP server' },
  'custom-tool': { type: 'string', multiple: true, help: 'FILE: a JSON file holding a custom tool {"name", "description", "input_schema"} (or an array of them); replaces the one of that name' },
  'remove-custom-tool': { type: 'string', multiple: true, help: 'NAME: take a custom tool away' },
};

type Tools = NonNullable<AgentCreateParams['tools']>;
type Servers = NonNullable<AgentCreateParams['mcp_servers']>;
type Toolset = Extract<Tools[number], { type: typeof AGENT_TOOLSET }>;
type McpToolset = Extract<Tools[number], { type: 'mcp_toolset' }>;
type CustomTool = Extract<Tools[number], { type: 'custom' }>;
type Switch = 'off' | 'on' | 'ask' | 'allow';

const SWITCHES: readonly Switch[] = ['off', 'on', 'ask', 'allow'];
const list = (values: OptionValues, name: string): string[] => (Array.isArray(values[name]) ? (values[name] as string[]) : []);

function parseSwitch(raw: string, option: string): { target: string; value: Switch } {
  const at = raw.lastIndexOf(':');
  const value = raw.slice(at + 1) as Switch;
  if (at <= 0 || !SWITCHES.includes(value)) throw new UsageError(`--${option} must look like NAME:${SWITCHES.join('|')}, got "${raw}"`);
  return { target: raw.slice(0, at), value };
}

/** A configs entry after one switch: on/off set `enabled`, ask/allow set the permission policy. */
function switched<C extends { name: string; enabled?: boolean | null; permission_policy?: { type: 'always_allow' | 'always_ask' | 'auto' } | null }>(config: C, value: Switch): C {
  if (value === 'off' || value === 'on') return { ...config, enabled: value === 'on' };
  return { ...config, permission_policy: { type: value === 'ask' ? 'always_ask' : 'always_allow' } };
}

function withConfig<C extends { name: string }>(configs: readonly C[], name: string, change: (c: C) => C, fresh: C): C[] {
  const found = configs.some((c) => c.name === name);
  return found ? configs.map((c) => (c.name === name ? change(c) : c)) : [...configs, change(fresh)];
}

/** True when the options say anything about tools (an update then rewrites them from the current version). */
export const toolOptionsGiven = (o: OptionValues): boolean =>
  o['no-toolset'] === true || o['permission'] !== undefined || ['tool', 'mcp', 'mcp-tool', 'custom-tool', 'remove-custom-tool'].some((n) => list(o, n).length > 0);

/**
 * The custom tools a `--custom-tool` file holds: one object or an array of them, `type` optional.
 * Only what the CLI needs to merge them is checked here (a name); the API judges the rest.
 */
function customToolsFromFile(path: string): CustomTool[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new UsageError(`--custom-tool ${path}: cannot read it (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new UsageError(`--custom-tool ${path}: not valid JSON (${(e as Error).message})`);
  }
  return (Array.isArray(value) ? value : [value]).map((tool: unknown, i) => {
    const where = Array.isArray(value) ? `${path}[${i}]` : path;
    if (typeof tool !== 'object' || tool === null || Array.isArray(tool)) throw new UsageError(`--custom-tool ${where}: must be a JSON object {"name", "description", "input_schema"}`);
    const t = tool as Record<string, unknown>;
    if (typeof t['name'] !== 'string') throw new UsageError(`--custom-tool ${where}: needs a "name"`);
    if (t['type'] !== undefined && t['type'] !== 'custom') throw new UsageError(`--custom-tool ${where}: "type" must be "custom" (or left out), got ${JSON.stringify(t['type'])}`);
    return { ...t, type: 'custom' } as CustomTool;
  });
}

/**
 * The agent's `tools` and `mcp_servers` after the options, starting from `current` (an update) or
 * from the whole built-in toolset (a create). Stored tools are valid request tools, so they pass through.
 */
export function toolsFromOptions(o: OptionValues, current: Pick<AgentConfig, 'tools' | 'mcp_servers'> | null): { tools: Tools; mcp_servers: Servers } {
  let tools: Tools = current ? [...(current.tools as Tools)] : [{ type: AGENT_TOOLSET }];
  let servers: Servers = current ? [...(current.mcp_servers as Servers)] : [];
  const toolset = (): Toolset => (tools.find((t) => t.type === AGENT_TOOLSET) as Toolset | undefined) ?? { type: AGENT_TOOLSET };
  const replace = (next: Tools[number], match: (t: Tools[number]) => boolean) => {
    tools = tools.some(match) ? tools.map((t) => (match(t) ? next : t)) : [...tools, next];
  };

  if (o['no-toolset'] === true) tools = tools.filter((t) => t.type !== AGENT_TOOLSET);
  const permission = typeof o['permission'] === 'string' ? o['permission'] : undefined;
  if (permission !== undefined) {
    if (permission !== 'allow' && permission !== 'ask') throw new UsageError(`--permission must be allow or ask, got "${permission}"`);
    const current = toolset();
    replace({ ...current, default_config: { ...current.default_config, permission_policy: { type: permission === 'ask' ? 'always_ask' : 'always_allow' } } }, (t) => t.type === AGENT_TOOLSET);
  }
  for (const raw of list(o, 'tool')) {
    const { target, value } = parseSwitch(raw, 'tool');
    const name = AGENT_TOOL_NAMES.find((n) => n === target);
    if (name === undefined) throw new UsageError(`--tool: no built-in tool "${target}" (${AGENT_TOOL_NAMES.join(', ')})`);
    const current = toolset();
    replace({ ...current, configs: withConfig(current.configs ?? [], name, (c) => switched(c, value), { name }) }, (t) => t.type === AGENT_TOOLSET);
  }
  for (const raw of list(o, 'mcp')) {
    const at = raw.indexOf('=');
    if (at <= 0) throw new UsageError(`--mcp must look like NAME=URL, got "${raw}"`);
    const server = { type: 'url' as const, name: raw.slice(0, at), url: raw.slice(at + 1) };
    servers = [...servers.filter((s) => s.name !== server.name), server];
    if (!tools.some((t) => t.type === 'mcp_toolset' && t.mcp_server_name === server.name)) tools = [...tools, { type: 'mcp_toolset', mcp_server_name: server.name }];
  }
  for (const raw of list(o, 'mcp-tool')) {
    const { target, value } = parseSwitch(raw, 'mcp-tool');
    const dot = target.indexOf('.');
    const serverName = target.slice(0, dot);
    const match = (t: Tools[number]) => t.type === 'mcp_toolset' && t.mcp_server_name === serverName;
    const current = tools.find(match) as McpToolset | undefined;
    if (dot <= 0 || current === undefined) throw new UsageError(`--mcp-tool: "${target}" names no tool of an MCP server of the agent (SERVER.TOOL; add the server with --mcp)`);
    replace({ ...current, configs: withConfig(current.configs ?? [], target.slice(dot + 1), (c) => switched(c, value), { name: target.slice(dot + 1) }) }, match);
  }
  for (const name of list(o, 'remove-custom-tool')) {
    if (!tools.some((t) => t.type === 'custom' && t.name === name)) throw new UsageError(`--remove-custom-tool: the agent has no custom tool "${name}"`);
    tools = tools.filter((t) => !(t.type === 'custom' && t.name === name));
  }
  for (const tool of list(o, 'custom-tool').flatMap((path) => customToolsFromFile(path))) {
    replace(tool, (t) => t.type === 'custom' && t.name === tool.name);
  }
  return { tools, mcp_servers: servers };
}

const grant = (enabled: boolean, policy: string) => (!enabled ? ' (off)' : policy === 'always_ask' ? ' (ask)' : '');

/** `bash (ask), edit, read, …, web_fetch (off)`, or `none`. */
export function toolsSummary(agent: AgentConfig): string {
  const { builtin } = resolveAgentTools(agent);
  if (!agent.tools.some((t) => t.type === AGENT_TOOLSET)) return 'none';
  return AGENT_TOOL_NAMES.map((name) => `${name}${grant(builtin[name].enabled, builtin[name].policy)}`).join(', ');
}

/** One line per MCP server: `docs https://…  default (ask); shout (off)`. */
export function mcpSummary(agent: AgentConfig): string {
  const { mcp } = resolveAgentTools(agent);
  if (mcp.length === 0) return 'none';
  return mcp
    .map((s) => {
      const tools = Object.entries(s.tools).map(([name, g]) => `${name}${grant(g.enabled, g.policy)}`);
      return `${s.name} ${s.url}  default${grant(s.default.enabled, s.default.policy) || ' (on)'}${tools.length > 0 ? `; ${tools.join(', ')}` : ''}`;
    })
    .join('\n    ');
}

/** One line per custom tool: `lookup_order(order_id, note?)  Find an order by its id`. */
export function customToolsSummary(agent: AgentConfig): string {
  const custom = agent.tools.filter((t) => t.type === 'custom');
  if (custom.length === 0) return 'none';
  return custom
    .map((t) => {
      const declared = t.input_schema['properties'];
      const properties = typeof declared === 'object' && declared !== null ? Object.keys(declared) : [];
      const required = new Set(Array.isArray(t.input_schema['required']) ? (t.input_schema['required'] as unknown[]) : []);
      const description = t.description.split('\n')[0] ?? '';
      return `${t.name}(${properties.map((p) => (required.has(p) ? p : `${p}?`)).join(', ')})${description === '' ? '' : `  ${description}`}`;
    })
    .join('\n    ');
}
