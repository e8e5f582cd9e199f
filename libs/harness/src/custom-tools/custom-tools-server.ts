import type { AgentConfig } from '@berth/contracts';
import type { FileToWrite } from '../harness-adapter.port';
import { CUSTOM_TOOLS_CLIENT_JS } from './custom-tools-client';

/** Where, inside the sandbox, the server reaches the sandbox-manager: beside the egress socket, in the read-only platform mount. */
export const CUSTOM_TOOLS_SOCKET = '/run/berth/tools.sock';

/** The socket's file name in the sandbox's egress directory on the host (the manager listens there). */
export const CUSTOM_TOOLS_SOCKET_FILE = 'tools.sock';

/** The agent's custom tools, as the MCP `tools/list` answer names them. */
export type CustomToolDefinition = Readonly<{ name: string; description: string; inputSchema: Readonly<Record<string, unknown>> }>;

export const customToolsOf = (agent: AgentConfig): CustomToolDefinition[] =>
  agent.tools.flatMap((tool) => (tool.type === 'custom' ? [{ name: tool.name, description: tool.description, inputSchema: tool.input_schema }] : []));

/** Where the custom tools' files go in the sandbox (rewritten every turn). */
export const customToolsDir = (home: string): string => `${home}/.berth/custom-tools`;

/** The socket client every harness's tool shares, and the agent's tools: the files both the MCP server and Pi's extension need. */
export function customToolsFiles(agent: AgentConfig, home: string): FileToWrite[] {
  const dir = customToolsDir(home);
  return [
    { path: `${dir}/client.mjs`, content: CUSTOM_TOOLS_CLIENT_JS },
    { path: `${dir}/tools.json`, content: JSON.stringify(customToolsOf(agent)) },
  ];
}

/** The files the server needs in the sandbox, and how a harness starts it (a stdio MCP server). */
export type CustomToolsLaunch = Readonly<{ files: FileToWrite[]; command: string; args: string[] }>;

export function customToolsLaunch(agent: AgentConfig, home: string): CustomToolsLaunch | null {
  if (customToolsOf(agent).length === 0) return null;
  const dir = customToolsDir(home);
  return {
    files: [{ path: `${dir}/server.mjs`, content: CUSTOM_TOOLS_SERVER_JS }, ...customToolsFiles(agent, home)],
    command: 'node',
    args: [`${dir}/server.mjs`, `${dir}/tools.json`, CUSTOM_TOOLS_SOCKET],
  };
}

/**
 * A stdio MCP server (newline-delimited JSON-RPC, no dependencies: it runs on the image's Node)
 * that offers the agent's custom tools and forwards each `tools/call` to the sandbox-manager with
 * the shared socket client (`client.mjs` beside it, `CUSTOM_TOOLS_CLIENT_JS`): its answer is the
 * MCP result, `{ content, isError }`, or an error result. `notifications/cancelled` (the harness
 * gave up the call, e.g. an interrupt) ends the wait. `tool_use_id` is the harness's own id when
 * its MCP client sends one that matches what it prints (Claude Code's
 * `_meta["claudecode/toolUseId"]`); otherwise the manager matches the call by name and input
 * (Codex sends `_meta.callId`, the model's call id, but prints its own item id).
 */
export const CUSTOM_TOOLS_SERVER_JS = `// Written by Berth into every sandbox whose agent has custom tools (see libs/harness/src/custom-tools).
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { askPlatform } from './client.mjs';

const [toolsFile, socketPath] = process.argv.slice(2);
const tools = JSON.parse(readFileSync(toolsFile, 'utf8'));
const calls = new Map();

const send = (message) => process.stdout.write(JSON.stringify(message) + '\\n');
const reply = (id, result) => send({ jsonrpc: '2.0', id, result });
const fail = (id, code, message) => send({ jsonrpc: '2.0', id, error: { code, message } });

function ask(id, request) {
  const call = askPlatform(socketPath, request);
  calls.set(id, call);
  void call.answer.then((answer) => {
    calls.delete(id);
    if (typeof answer.error === 'string') reply(id, { content: [{ type: 'text', text: answer.error }], isError: true });
    else reply(id, { content: Array.isArray(answer.content) ? answer.content : [], isError: answer.isError === true });
  });
}

function cancel(id) {
  calls.get(id)?.cancel();
  calls.delete(id);
}

function handle(message) {
  const { id, method, params } = message;
  switch (method) {
    case 'initialize':
      return reply(id, {
        protocolVersion: typeof params?.protocolVersion === 'string' ? params.protocolVersion : '2025-06-18',
        capabilities: { tools: {} },
        serverInfo: { name: 'berth-custom-tools', version: '1.0.0' },
      });
    case 'ping':
      return reply(id, {});
    case 'tools/list':
      return reply(id, { tools });
    case 'tools/call': {
      const name = params?.name;
      if (!tools.some((t) => t.name === name)) return fail(id, -32602, 'no custom tool named ' + String(name));
      const meta = params?._meta ?? {};
      const toolUseId = typeof meta['claudecode/toolUseId'] === 'string' ? meta['claudecode/toolUseId'] : null;
      return ask(id, { tool_use_id: toolUseId, name, input: params?.arguments ?? {} });
    }
    case 'notifications/cancelled':
      return cancel(params?.requestId);
    default:
      if (id !== undefined && id !== null && typeof method === 'string' && !method.startsWith('notifications/')) fail(id, -32601, 'method not found: ' + method);
  }
}

createInterface({ input: process.stdin }).on('line', (line) => {
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    return;
  }
  if (message !== null && typeof message === 'object') handle(message);
}).on('close', () => process.exit(0));
`;
