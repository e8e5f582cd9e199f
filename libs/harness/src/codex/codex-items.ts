import type { AgentOutput } from '@berth/contracts';
import { arr, obj, str, textContent, type JsonObject } from '../json-line';

type ToolUse = Extract<AgentOutput, { kind: 'tool_use' }>;

/**
 * Codex's tool items, in the shape `codex exec --json` prints them (snake_case types and fields);
 * app-server items are brought to it first (`fromAppServerItem`), so both protocols name and report
 * tools alike: the tool name is the item type (or `server.tool` for MCP).
 */
export function toolUseOf(item: JsonObject): ToolUse | null {
  const id = str(item['id']);
  if (id === undefined) return null;
  const base = { kind: 'tool_use' as const, tool_use_id: id, needs_confirmation: false };
  switch (item['type']) {
    case 'command_execution':
      return { ...base, name: 'command_execution', input: { command: str(item['command']) ?? '' } };
    case 'file_change':
      return { ...base, name: 'file_change', input: { changes: arr(item['changes']) } };
    case 'mcp_tool_call':
      return { ...base, name: `${str(item['server']) ?? 'mcp'}.${str(item['tool']) ?? 'tool'}`, input: { ...obj(item['arguments']) } };
    case 'web_search':
      return { ...base, name: 'web_search', input: { query: str(item['query']) ?? '' } };
    default:
      return null;
  }
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
