import type { AgentConfig } from '@berth/contracts';
import type { FileToWrite } from '../harness-adapter.port';

/** Where, inside the sandbox, the server reaches the sandbox-manager: beside the egress socket, in the read-only platform mount. */
export const CUSTOM_TOOLS_SOCKET = '/run/berth/tools.sock';

/** The socket's file name in the sandbox's egress directory on the host (the manager listens there). */
export const CUSTOM_TOOLS_SOCKET_FILE = 'tools.sock';

/** The agent's custom tools, as the MCP `tools/list` answer names them. */
export type CustomToolDefinition = Readonly<{ name: string; description: string; inputSchema: Readonly<Record<string, unknown>> }>;

export const customToolsOf = (agent: AgentConfig): CustomToolDefinition[] =>
  agent.tools.flatMap((tool) => (tool.type === 'custom' ? [{ name: tool.name, description: tool.description, inputSchema: tool.input_schema }] : []));

/** The files the server needs in the sandbox, and how a harness starts it (a stdio MCP server). */
export type CustomToolsLaunch = Readonly<{ files: FileToWrite[]; command: string; args: string[] }>;

export function customToolsLaunch(agent: AgentConfig, home: string): CustomToolsLaunch | null {
  const tools = customToolsOf(agent);
  if (tools.length === 0) return null;
  const dir = `${home}/.berth/custom-tools`;
  return {
    files: [
      { path: `${dir}/server.mjs`, content: CUSTOM_TOOLS_SERVER_JS },
      { path: `${dir}/tools.json`, content: JSON.stringify(tools) },
    ],
    command: 'node',
    args: [`${dir}/server.mjs`, `${dir}/tools.json`, CUSTOM_TOOLS_SOCKET],
  };
}

/**
 * A stdio MCP server (newline-delimited JSON-RPC, no dependencies: it runs on the image's Node)
 * that offers the agent's custom tools and forwards each `tools/call` to the sandbox-manager over
 * the unix socket: one JSON line `{ tool_use_id, name, input }` out, one JSON line back, either
 * `{ content, isError }` (the MCP result) or `{ error }`. The call waits as long as the client
 * takes to answer. When the connection breaks before the answer (the manager restarted, or is
 * not listening yet) it connects again and asks again with the same request: the manager answers
 * from the session's journal, so an answer given while the connection was down is not lost.
 * `notifications/cancelled` (the harness gave up the call, e.g. an interrupt) ends the wait.
 * `tool_use_id` is the harness's own id when its MCP client sends it (Claude Code's
 * `_meta["claudecode/toolUseId"]`); otherwise the manager matches the call by name and input.
 */
export const CUSTOM_TOOLS_SERVER_JS = `// Written by Berth into every sandbox whose agent has custom tools (see libs/harness/src/custom-tools).
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { createInterface } from 'node:readline';

const [toolsFile, socketPath] = process.argv.slice(2);
const tools = JSON.parse(readFileSync(toolsFile, 'utf8'));
const RETRY_MS = 500;
const calls = new Map();

const send = (message) => process.stdout.write(JSON.stringify(message) + '\\n');
const reply = (id, result) => send({ jsonrpc: '2.0', id, result });
const fail = (id, code, message) => send({ jsonrpc: '2.0', id, error: { code, message } });

function ask(id, request) {
  const call = { cancelled: false, socket: null, timer: null };
  calls.set(id, call);
  const attempt = () => {
    if (call.cancelled) return;
    let buffer = '';
    let answered = false;
    const socket = connect(socketPath);
    call.socket = socket;
    socket.setEncoding('utf8');
    socket.on('connect', () => socket.write(JSON.stringify(request) + '\\n'));
    socket.on('data', (chunk) => {
      buffer += chunk;
      const end = buffer.indexOf('\\n');
      if (end < 0 || answered) return;
      answered = true;
      socket.end();
      calls.delete(id);
      let answer;
      try {
        answer = JSON.parse(buffer.slice(0, end));
      } catch {
        answer = { error: 'the platform sent an unreadable answer' };
      }
      if (typeof answer.error === 'string') reply(id, { content: [{ type: 'text', text: answer.error }], isError: true });
      else reply(id, { content: Array.isArray(answer.content) ? answer.content : [], isError: answer.isError === true });
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      if (answered || call.cancelled) return;
      call.timer = setTimeout(attempt, RETRY_MS);
    });
  };
  attempt();
}

function cancel(id) {
  const call = calls.get(id);
  if (call === undefined) return;
  call.cancelled = true;
  calls.delete(id);
  if (call.timer !== null) clearTimeout(call.timer);
  call.socket?.destroy();
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
