import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RecordedEvent } from '@berth/contracts';
import { EGRESS_SOCKET_SUBDIR } from '@berth/docker';
import { CUSTOM_TOOLS_CLIENT_JS, CUSTOM_TOOLS_SERVER_JS, CUSTOM_TOOLS_SOCKET_FILE } from '@berth/harness';
import type { Logger } from '@berth/ports';
import { emptySessionView, foldSessionEvent, type SessionView } from '@berth/sandbox-workflow';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CustomToolSockets } from './custom-tool-sockets';

/**
 * Berth's in-sandbox custom tools server (the real program, run with node, spoken to by the
 * official MCP SDK client the way a harness does) against the manager's tools socket on a real
 * unix socket: tools/list offers the agent's tools; a call waits until the session's view has
 * the client's result; when the manager goes away mid-wait and a new one serves the socket, the
 * server connects again and asks again, and gets the answer from the view.
 */

const quiet: Logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined, child: () => quiet } as unknown as Logger;
const SESSION = 'sesn_tools';
const DIR_ID = '0123456789abcdef';
const TOOLS = [{ name: 'get_weather', description: 'The weather in a city', inputSchema: { type: 'object', properties: { city: { type: 'string' } } } }];

let root: string;
let events: RecordedEvent[];
let client: Client;
let sockets: CustomToolSockets;

const record = (type: string, data: Record<string, unknown>): void => {
  events.push({ type, data, id: `sevt_${events.length + 1}`, session_id: SESSION, seq: events.length + 1, schema_version: 1, command_id: `cmd_${events.length + 1}`, occurred_at: new Date().toISOString() } as unknown as RecordedEvent);
};
let onAsked: (() => void) | null = null;
/** Resolves when the manager next reads the view for a call (the call reached it and looked for its result). */
const asked = (): Promise<void> => new Promise((resolve) => (onAsked = resolve));
const view = async (): Promise<SessionView> => {
  const v = events.reduce(foldSessionEvent, emptySessionView());
  onAsked?.();
  onAsked = null;
  return v;
};
const egressSocketOf = async (sandboxId: string) => (sandboxId === 'sbx' ? join(root, DIR_ID, EGRESS_SOCKET_SUBDIR, 'egress.sock') : null);
const newSockets = () => new CustomToolSockets({ egressSocketOf, view: () => view(), log: quiet, recheckMs: 60_000 });

beforeEach(async () => {
  root = mkdtempSync(join(tmpdir(), 'berth-tools-'));
  const socketDir = join(root, DIR_ID, EGRESS_SOCKET_SUBDIR);
  mkdirSync(socketDir, { recursive: true });
  writeFileSync(join(root, 'server.mjs'), CUSTOM_TOOLS_SERVER_JS);
  writeFileSync(join(root, 'client.mjs'), CUSTOM_TOOLS_CLIENT_JS);
  writeFileSync(join(root, 'tools.json'), JSON.stringify(TOOLS));
  events = [];
  record('UserMessageReceived', { turn_id: 'turn_1', content: [{ type: 'text', text: 'weather?' }], queued: false });
  record('TurnStarted', { turn_id: 'turn_1' });
  sockets = newSockets();
  await sockets.serve(SESSION, 'sbx');
  client = new Client({ name: 'harness', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [join(root, 'server.mjs'), join(root, 'tools.json'), join(socketDir, CUSTOM_TOOLS_SOCKET_FILE)] }));
});
afterEach(async () => {
  await client?.close();
  await sockets?.stop();
  rmSync(root, { recursive: true, force: true });
});

const useRecorded = (harnessId: string, city: string) =>
  record('AgentCustomToolUseRecorded', { turn_id: 'turn_1', offset: events.length, harness_tool_use_id: harnessId, name: 'get_weather', input: { city } });
const resultRecorded = (eventId: string, harnessId: string, text: string, isError = false) =>
  record('CustomToolResultReceived', { turn_id: 'turn_1', custom_tool_use_event_id: eventId, harness_tool_use_id: harnessId, content: [{ type: 'text', text }], is_error: isError });

describe('the in-sandbox custom tools server and the manager tools socket', () => {
  it("offers the agent's custom tools", async () => {
    const { tools } = await client.listTools();
    expect(tools).toEqual([{ name: 'get_weather', description: 'The weather in a city', inputSchema: TOOLS[0]?.inputSchema }]);
  });

  it('a call named by its tool-use id waits for the result and gets it as the MCP result (errors too)', async () => {
    useRecorded('toolu_1', 'Oslo');
    let settled = false;
    const reached = asked();
    const call = client.callTool({ name: 'get_weather', arguments: { city: 'Oslo' }, _meta: { 'claudecode/toolUseId': 'toolu_1' } }).finally(() => (settled = true));
    await reached;
    expect(settled).toBe(false);
    resultRecorded(events.at(-1)?.id ?? '', 'toolu_1', 'no such city', true);
    sockets.changed(SESSION);
    expect(await call).toEqual({ content: [{ type: 'text', text: 'no such city' }], isError: true });
  });

  it('asks again after the manager went away mid-wait, and the new manager answers from the journal', async () => {
    useRecorded('toolu_2', 'Bergen');
    const useId = events.at(-1)?.id ?? '';
    const reached = asked();
    const call = client.callTool({ name: 'get_weather', arguments: { city: 'Bergen' } });
    await reached;
    // The manager dies (its connections with it); the result is recorded while none listens.
    await sockets.stop();
    resultRecorded(useId, 'toolu_2', 'rain, 9°C');
    sockets = newSockets();
    await sockets.serve(SESSION, 'sbx');
    expect(await call).toEqual({ content: [{ type: 'text', text: 'rain, 9°C' }], isError: false });
  });

  it('an unknown tool is an MCP error; a call whose turn ended is answered with an error', async () => {
    await expect(client.callTool({ name: 'nope', arguments: {} })).rejects.toThrow(/no custom tool named nope/);
    useRecorded('toolu_3', 'Tromsø');
    const reached = asked();
    const call = client.callTool({ name: 'get_weather', arguments: { city: 'Tromsø' }, _meta: { 'claudecode/toolUseId': 'toolu_3' } });
    await reached;
    record('TurnCompleted', { turn_id: 'turn_1', interrupted: true });
    sockets.changed(SESSION);
    expect(await call).toEqual({ content: [{ type: 'text', text: expect.stringContaining('has ended') }], isError: true });
  });
});
