import { ValidationError } from '@berth/core';
import type { HarnessKind } from '../content';
import { AGENT_TOOL_NAMES, AGENT_TOOLSET, WEB_TOOL_OPTIONS, type AgentConfig } from './agent-config';
import { mcpServerInUse, resolveAgentTools, type ResolvedAgentTools } from './agent-tools';
import { HARNESS_SUPPORT } from './harness-support';

/** A field the API accepts but cannot honour: `path` names it the way the API returns it (`tools.0.configs.2.permission_policy`). */
export type ConfigIssue = Readonly<{ path: string; message: string }>;

const NOT_YET = 'not supported by Berth yet';

/** The MCP server name the harness sees an agent's custom tools under (Berth's server in the sandbox). */
export const CUSTOM_TOOLS_MCP_SERVER = 'berth';

/**
 * What Berth cannot honour in an agent whatever the harness. The API refuses an agent create or
 * update with the first issue, and a session of a stored version that has any.
 */
export function agentConfigIssues(agent: AgentConfig): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  if (agent.model.inference_geo !== undefined) issues.push({ path: 'model.inference_geo', message: `inference_geo is ${NOT_YET}: the harness chooses where its model runs` });
  if (agent.skills.length > 0) issues.push({ path: 'skills', message: `skills are ${NOT_YET}: no harness loads Managed Agents skills` });
  if (agent.multiagent !== null) issues.push({ path: 'multiagent', message: `multiagent is ${NOT_YET}: a session runs one agent thread` });
  if (agent.execution_identity.type !== 'service_account') issues.push({ path: 'execution_identity', message: `${agent.execution_identity.type} is ${NOT_YET}: runs carry no cloud identity` });

  const serverNames = agent.mcp_servers.map((s) => s.name);
  agent.mcp_servers.forEach((server, i) => {
    if (serverNames.indexOf(server.name) !== i) issues.push({ path: `mcp_servers.${i}.name`, message: `duplicate MCP server name ${server.name}` });
    if (!agent.tools.some((t) => t.type === 'mcp_toolset' && t.mcp_server_name === server.name)) {
      issues.push({ path: `mcp_servers.${i}`, message: `MCP server ${server.name} is not referenced by an mcp_toolset in tools` });
    }
  });

  // Reserved even for an agent without custom tools: the adapters read every call of a `berth` server as a custom tool call.
  agent.mcp_servers.forEach((server, i) => {
    if (server.name === CUSTOM_TOOLS_MCP_SERVER) {
      issues.push({ path: `mcp_servers.${i}.name`, message: `${CUSTOM_TOOLS_MCP_SERVER} is the name Berth offers an agent's custom tools under: name this MCP server otherwise` });
    }
  });

  let toolsets = 0;
  const mcpToolsets = new Set<string>();
  const customNames = new Set<string>();
  agent.tools.forEach((tool, i) => {
    const at = `tools.${i}`;
    if (tool.type === 'custom') {
      if (customNames.has(tool.name)) issues.push({ path: `${at}.name`, message: `a second custom tool named ${tool.name}` });
      customNames.add(tool.name);
      return;
    }
    const policies = [{ path: `${at}.default_config.permission_policy`, type: tool.default_config.permission_policy.type }, ...tool.configs.map((c, j) => ({ path: `${at}.configs.${j}.permission_policy`, type: c.permission_policy.type }))];
    for (const policy of policies) {
      if (policy.type === 'auto') issues.push({ path: policy.path, message: `auto is ${NOT_YET}: nothing judges tool calls on the server; use always_allow or always_ask` });
    }
    if (tool.type === 'mcp_toolset') {
      if (!serverNames.includes(tool.mcp_server_name)) issues.push({ path: `${at}.mcp_server_name`, message: `no MCP server named ${tool.mcp_server_name} in mcp_servers` });
      if (mcpToolsets.has(tool.mcp_server_name)) issues.push({ path: at, message: `a second mcp_toolset for ${tool.mcp_server_name}` });
      mcpToolsets.add(tool.mcp_server_name);
      return;
    }
    if (++toolsets > 1) issues.push({ path: at, message: `a second ${AGENT_TOOLSET}` });
    const seen = new Set<string>();
    tool.configs.forEach((config, j) => {
      if (!(AGENT_TOOL_NAMES as readonly string[]).includes(config.name)) issues.push({ path: `${at}.configs.${j}.name`, message: `no tool ${config.name} in ${AGENT_TOOLSET}` });
      if (seen.has(config.name)) issues.push({ path: `${at}.configs.${j}.name`, message: `a second config for ${config.name}` });
      seen.add(config.name);
      for (const option of WEB_TOOL_OPTIONS) {
        if (config[option] !== undefined) issues.push({ path: `${at}.configs.${j}.${option}`, message: `${option} is ${NOT_YET}: no harness limits its web tools this way` });
      }
    });
  });
  return issues;
}

/** What the harness of the session's environment cannot honour in the agent (on top of `agentConfigIssues`). */
export function agentConfigIssuesFor(agent: AgentConfig, harness: HarnessKind): ConfigIssue[] {
  const support = HARNESS_SUPPORT[harness];
  const tools = resolveAgentTools(agent);
  const issues: ConfigIssue[] = [...agentConfigIssues(agent)];
  const offered = Object.values(tools.builtin).filter((t) => support.tools.includes(t.name));

  for (const tool of Object.values(tools.builtin)) {
    if (tool.explicit && tool.enabled && !support.tools.includes(tool.name)) issues.push({ path: tool.path, message: `${harness} has no ${tool.name} tool` });
  }
  const disabled = offered.find((t) => !t.enabled);
  if (!support.toolsSwitchable && disabled) issues.push({ path: disabled.path, message: `${harness} cannot take its ${disabled.name} tool away: enable every tool it has (${support.tools.join(', ')})` });
  for (const group of support.toolGroups) {
    const states = group.map((name) => tools.builtin[name]);
    const odd = states.find((t) => t.enabled !== states[0].enabled);
    if (odd) issues.push({ path: odd.path, message: `${harness} provides ${group.join(', ')} through one tool: enable or disable them together` });
  }

  issues.push(...confirmationIssues(tools, harness));

  const custom = agent.tools.findIndex((t) => t.type === 'custom');
  if (custom >= 0 && support.customTools !== true) issues.push({ path: `tools.${custom}`, message: `${harness} cannot offer custom tools: ${support.customTools.refused} (claude-code, codex and pi can)` });

  const used = tools.mcp.filter(mcpServerInUse);
  if (support.mcp === 'none' && used.length > 0) issues.push({ path: 'mcp_servers', message: `${harness} cannot connect to MCP servers` });
  if (support.mcp === 'restrict_only') {
    for (const server of used) {
      const tools = Object.values(server.tools);
      const enabled = server.default.enabled ? undefined : tools.find((t) => t.enabled);
      if (enabled) issues.push({ path: enabled.path, message: `${harness} cannot offer only some tools of an MCP server: enable the server's default_config and disable the tools you do not want` });
      const exempt = server.default.policy === 'always_ask' ? tools.find((t) => t.enabled && t.policy !== 'always_ask') : undefined;
      if (exempt) issues.push({ path: `${exempt.path}.permission_policy`, message: `${harness} cannot exempt one tool of an MCP server whose default asks: make the default always_allow and ask for the tools that need it` });
    }
  }

  const effort = agent.model.effort?.type;
  if (effort !== undefined && !support.effort.includes(effort)) {
    issues.push({ path: 'model.effort', message: support.effort.length === 0 ? `${harness} has no effort setting` : `${harness} has no effort ${effort} (it has ${support.effort.join(', ')})` });
  }
  if (agent.model.speed === 'fast' && !support.fastSpeed) issues.push({ path: 'model.speed', message: `${harness} has no fast mode Berth can turn on` });
  return issues;
}

function confirmationIssues(tools: ResolvedAgentTools, harness: HarnessKind): ConfigIssue[] {
  const support = HARNESS_SUPPORT[harness];
  if (support.confirmation === 'per_tool') return [];
  const grants = [
    ...Object.values(tools.builtin)
      .filter((t) => t.enabled && support.tools.includes(t.name))
      .map((t) => ({ policy: t.policy, path: `${t.path}.permission_policy`, mcp: false })),
    ...tools.mcp.flatMap((s) => [
      ...(s.default.enabled ? [{ policy: s.default.policy, path: `${s.defaultPath}.permission_policy`, mcp: true }] : []),
      ...Object.values(s.tools).filter((t) => t.enabled).map((t) => ({ policy: t.policy, path: `${t.path}.permission_policy`, mcp: true })),
    ]),
  ];
  const asking = grants.find((g) => g.policy === 'always_ask');
  if (asking === undefined) return [];
  if (support.confirmation === 'none') return [{ path: asking.path, message: `${harness} cannot wait for tool confirmation: use always_allow` }];
  const allowing = grants.find((g) => g.policy !== 'always_ask');
  if (allowing !== undefined) return [{ path: allowing.path, message: `${harness} asks for confirmation of every tool or of none: give all enabled tools the same permission_policy` }];
  // codex app-server asks before commands and file changes, never before an MCP call.
  const mcpAsking = harness === 'codex' ? grants.find((g) => g.mcp) : undefined;
  return mcpAsking === undefined ? [] : [{ path: mcpAsking.path, message: 'codex cannot wait for confirmation of an MCP tool call: use always_allow on every tool, or no MCP server' }];
}

/** Throws the first issue as a 400 naming the field (under `prefix`, e.g. `agent` for a session create). */
export function refuseConfigIssues(issues: readonly ConfigIssue[], prefix = ''): void {
  const first = issues[0];
  if (first === undefined) return;
  const field = [prefix, first.path].filter(Boolean).join('.');
  throw new ValidationError(`${field}: ${first.message}`, field);
}
