import { CUSTOM_TOOLS_MCP_SERVER, type AgentToolName } from '@berth/contracts';
import { arr, obj, str, textContent, type JsonObject } from '../json-line';
import type { ToolCallOutput } from '../parse-state';

/**
 * Codex's tool items and the toolset tool each is: its shell does what bash, read, write, edit,
 * glob and grep do (one switch for all of them, `HARNESS_SUPPORT.codex.toolGroups`), `file_change`
 * is its patch tool, `web_search` its search.
 */
export const CODEX_TOOL_ITEMS: Readonly<Record<string, AgentToolName>> = { command_execution: 'bash', file_change: 'edit', web_search: 'web_search' };

/**
 * Codex's tool items, in the shape `codex exec --json` prints them (snake_case types and fields);
 * app-server items are brought to it first (`fromAppServerItem`), so both protocols name and report
 * tools alike: a toolset tool under its toolset name, an MCP call, or a call of one of the agent's
 * custom tools (a tool of Berth's own MCP server in the sandbox).
 */
export function toolUseOf(item: JsonObject): ToolCallOutput | null {
  const id = str(item['id']);
  const type = str(item['type']) ?? '';
  if (id === undefined) return null;
  if (type === 'mcp_tool_call') {
    const server = str(item['server']) ?? 'mcp';
    const name = str(item['tool']) ?? 'tool';
    const input = { ...obj(item['arguments']) };
    if (server === CUSTOM_TOOLS_MCP_SERVER) return { kind: 'custom_tool_use', tool_use_id: id, name, input };
    return { kind: 'mcp_tool_use', tool_use_id: id, server_name: server, name, input, needs_confirmation: false };
  }
  const name = CODEX_TOOL_ITEMS[type];
  if (name === undefined) return null;
  const input = type === 'command_execution' ? { command: str(item['command']) ?? '' } : type === 'file_change' ? { changes: arr(item['changes']) } : { query: str(item['query']) ?? '' };
  return { kind: 'tool_use', tool_use_id: id, name, input, needs_confirmation: false };
}

export function toolResultOf(item: JsonObject): { content: Record<string, unknown>[]; is_error: boolean } {
  // Only app-server items are ever declined (the user said no).
  if (item['status'] === 'declined') return { content: textContent('The user declined this tool use.'), is_error: true };
  const failed = item['status'] === 'failed';
  switch (item['type']) {
    case 'command_execution': {
      const exitCode = item['exit_code'];
      return { content: textContent(str(item['aggregated_output']) ?? ''), is_error: failed || (typeof exitCode === 'number' && exitCode !== 0) };
    }
    case 'file_change': {
      const summary = arr(item['changes']).map((c) => `${str(obj(c)['kind']) ?? 'update'} ${str(obj(c)['path']) ?? ''}`).join('\n');
      return { content: textContent(summary), is_error: failed };
    }
    case 'mcp_tool_call': {
      const error = str(obj(item['error'])['message']);
      if (error !== undefined) return { content: textContent(error), is_error: true };
      return { content: arr(obj(item['result'])['content']).map((c) => ({ ...obj(c) })), is_error: failed };
    }
    default:
      return { content: [], is_error: failed };
  }
}

const APP_SERVER_TYPES: Readonly<Record<string, string>> = {
  commandExecution: 'command_execution',
  fileChange: 'file_change',
  mcpToolCall: 'mcp_tool_call',
  webSearch: 'web_search',
  agentMessage: 'agent_message',
};

/**
 * An app-server item in the exec shape. Its command is the one the model wrote (`commandActions`),
 * not Codex's `/bin/bash -lc …` wrapper; a change's kind (`{ type: "add" }`) becomes the exec word.
 */
export function fromAppServerItem(item: JsonObject): JsonObject {
  const actions = arr(item['commandActions']).map((a) => str(obj(a)['command'])).filter((c): c is string => c !== undefined);
  return {
    ...item,
    type: APP_SERVER_TYPES[str(item['type']) ?? ''] ?? item['type'],
    command: actions.length > 0 ? actions.join(' && ') : item['command'],
    aggregated_output: item['aggregatedOutput'],
    exit_code: item['exitCode'],
    changes: arr(item['changes']).map((c) => ({ path: str(obj(c)['path']) ?? '', kind: str(obj(c)['kind']) ?? str(obj(obj(c)['kind'])['type']) ?? 'update' })),
  };
}
