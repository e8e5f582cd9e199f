import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentOutput } from '@berth/contracts';
import { testAgentConfig } from '@berth/contracts/testing';
import { CUSTOM_TOOLS_SOCKET, harnessAdapterFor, type HarnessAdapter, type TurnInput, type TurnPlan } from '@berth/harness';
import { AnthropicMessagesServer, lookupAnswer, OpenAiResponsesServer, reply, TestMcpServer, type ScriptedModelServer } from '@berth/testing';
import { harnessBinDir } from './cli-prefix';
import { recordFixture } from './fixture-recorder';
import { runLocalTurn } from './local-turn-runner';
import { copyTranscripts } from './transcript-copy';

/**
 * Each real harness CLI, on this host, against a scripted model server: a tool call writes a file,
 * the outputs show it, and a resumed second turn carries the first turn's conversation.
 */
const SECRETS = { BERTH_MODEL_API_KEY: 'sk-scripted-not-a-real-key' };

const kinds = (outputs: readonly AgentOutput[]) => outputs.map((o) => o.kind);
const messages = (outputs: readonly AgentOutput[]) =>
  outputs.flatMap((o) => (o.kind === 'message' ? o.content.map((b) => (b.type === 'text' ? b.text : '')) : []));

interface Case {
  readonly kind: 'claude-code' | 'codex' | 'pi';
  readonly cli: 'claude' | 'codex' | 'pi';
  readonly server: () => ScriptedModelServer;
  /** The model's tool call that writes `out.txt` in the cwd. */
  readonly writeFileCall: { name: string; input: Record<string, unknown> };
  /** Codex offers plain function tools only for a model id it has no metadata for. */
  readonly model: string;
}

const cases: Case[] = [
  { kind: 'claude-code', cli: 'claude', server: () => new AnthropicMessagesServer(), writeFileCall: { name: 'Bash', input: { command: 'echo hello > out.txt', description: 'write out.txt' } }, model: 'claude-opus-4-7' },
  { kind: 'codex', cli: 'codex', server: () => new OpenAiResponsesServer(), writeFileCall: { name: 'exec_command', input: { cmd: 'echo hello > out.txt' } }, model: 'berth-model' },
  { kind: 'pi', cli: 'pi', server: () => new AnthropicMessagesServer(), writeFileCall: { name: 'bash', input: { command: 'echo hello > out.txt' } }, model: 'claude-opus-4-7' },
];

describe.each(cases)('real $kind against a scripted model', ({ kind, cli, server: makeServer, writeFileCall, model }) => {
  const { binDir, reason } = harnessBinDir(cli);
  if (binDir === null) {
    it.skip(`skipped: ${reason}`, () => undefined);
    // A skipped suite must say why, plainly.
    console.warn(`real ${kind} tests skipped: ${reason}`);
    return;
  }
  let server: ScriptedModelServer;
  let root: string;
  let input: TurnInput;
  const adapter = harnessAdapterFor(kind);

  beforeEach(async () => {
    server = await makeServer().start();
    root = mkdtempSync(join(tmpdir(), `berth-${kind}-`));
    input = {
      prompt: 'Please write hello into out.txt',
      agent: testAgentConfig({ model, system: 'You are the Berth test agent.' }),
      resumeId: null,
      model: { baseUrl: server.url, apiKeyEnv: 'BERTH_MODEL_API_KEY' },
      cwd: join(root, 'work'),
      home: join(root, 'home'),
    };
  });
  afterEach(async () => {
    await server.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('runs a tool that writes a file, resumes the conversation, and resumes it again from a restored transcript in a new home', async () => {
    server.script(
      { kind: 'turn', thinking: 'I will write the file.', text: 'Writing the file.', toolCalls: [writeFileCall] },
      reply.text('The file is written.'),
      reply.text('You asked me to write out.txt.'),
      reply.text('We talked about out.txt.'),
    );

    const first = await runLocalTurn({ adapter, input, binDir, secrets: SECRETS });
    recordFixture(kind, 'tool-turn', first.stdoutLines, root);

    expect(first.stderr).not.toContain(SECRETS.BERTH_MODEL_API_KEY);
    expect(first.terminal).toEqual({ ok: true, interrupted: false, error: null });
    expect(readFileSync(join(input.cwd, 'out.txt'), 'utf8')).toBe('hello\n');
    expect(kinds(first.outputs)).toEqual(expect.arrayContaining(['thinking', 'tool_use', 'tool_result', 'message', 'usage']));
    const toolUse = first.outputs.find((o) => o.kind === 'tool_use');
    const toolResult = first.outputs.find((o) => o.kind === 'tool_result');
    expect(toolUse && toolResult && toolUse.kind === 'tool_use' && toolResult.kind === 'tool_result' && toolResult.tool_use_id === toolUse.tool_use_id).toBe(true);
    expect(kinds(first.outputs).indexOf('tool_use')).toBeLessThan(kinds(first.outputs).indexOf('tool_result'));
    expect(messages(first.outputs).at(-1)).toBe('The file is written.');
    expect(first.outputs.at(-1)?.kind).toBe('usage');
    expect(first.harnessSessionId).toEqual(expect.any(String));
    expect(JSON.stringify(server.modelRequests[0]?.body)).toContain('You are the Berth test agent.');
    const transcript = adapter.transcriptLocations(input.home, input.cwd, first.harnessSessionId ?? '')[0];
    expect(transcript && existsSync(transcript.dir)).toBe(true);

    const second = await runLocalTurn({ adapter, input: { ...input, prompt: 'What did I ask you before?', resumeId: first.harnessSessionId }, binDir, secrets: SECRETS });
    recordFixture(kind, 'resumed-turn', second.stdoutLines, root);

    expect(second.terminal).toEqual({ ok: true, interrupted: false, error: null });
    expect(messages(second.outputs)).toEqual(['You asked me to write out.txt.']);
    const lastRequest = JSON.stringify(server.modelRequests.at(-1)?.body);
    expect(lastRequest).toContain('Please write hello into out.txt');
    expect(lastRequest).toContain('The file is written.');
    expect(lastRequest).toContain('What did I ask you before?');

    // A brand-new sandbox: empty home, only the transcript restored, same cwd.
    const newHome = join(root, 'new-home');
    const restored = copyTranscripts(adapter, input.home, newHome, input.cwd, first.harnessSessionId ?? '');
    expect(restored.length).toBeGreaterThan(0);
    const third = await runLocalTurn({ adapter, input: { ...input, home: newHome, prompt: 'Summarise our chat.', resumeId: first.harnessSessionId }, binDir, secrets: SECRETS });

    expect(third.terminal).toEqual({ ok: true, interrupted: false, error: null });
    expect(messages(third.outputs)).toEqual(['We talked about out.txt.']);
    const restoredRequest = JSON.stringify(server.modelRequests.at(-1)?.body);
    expect(restoredRequest).toContain('Please write hello into out.txt');
    expect(restoredRequest).toContain('You asked me to write out.txt.');
    // The servers answer every endpoint these CLIs call (anything else would be a 404 here).
    expect(server.unroutedRequests).toEqual([]);
  }, 90_000);

  it('stops a turn in the middle of a streamed answer within 2 s of the interrupt', async () => {
    server.script(reply.text('a long answer that streams very slowly '.repeat(10), { chunkDelayMs: 250, chunkSize: 8 }));
    let interruptedAt = 0;
    const interruptWhen = server.waitForModelRequests(1, 30_000).then(async () => {
      await new Promise((resolve) => setTimeout(resolve, 500));
      interruptedAt = Date.now();
    });

    const turn = await runLocalTurn({ adapter, input, binDir, secrets: SECRETS, interruptWhen });
    recordFixture(kind, 'interrupted-turn', turn.stdoutLines, root);

    expect(interruptedAt).toBeGreaterThan(0);
    expect(Date.now() - interruptedAt).toBeLessThan(2_000);
    // Harnesses that report the interrupt say so; Codex (SIGINT) just exits before its terminal.
    if (turn.terminal !== null) expect(turn.terminal.ok && !turn.terminal.interrupted).toBe(false);
  }, 90_000);

  it('reports a model failure as a failed turn', async () => {
    server.setDefaultReply(reply.error(400, 'scripted bad request'));

    const turn = await runLocalTurn({ adapter, input, binDir, secrets: SECRETS });
    recordFixture(kind, 'model-error', turn.stdoutLines, root);

    expect(turn.terminal?.ok === false || turn.exitCode !== 0).toBe(true);
  }, 90_000);
});

interface AskCase {
  readonly kind: 'claude-code' | 'codex' | 'pi';
  readonly cli: 'claude' | 'codex' | 'pi';
  readonly server: () => ScriptedModelServer;
  /** The model's tool call that writes `asked.txt`, a call each harness asks about. */
  readonly writeCall: { name: string; input: Record<string, unknown> };
  /** The harness hands the deny message to the model (Codex's approval protocol has no message). */
  readonly relaysDenyMessage: boolean;
}

const askCases: AskCase[] = [
  { kind: 'claude-code', cli: 'claude', server: () => new AnthropicMessagesServer(), writeCall: { name: 'Bash', input: { command: 'echo asked > asked.txt', description: 'write asked.txt' } }, relaysDenyMessage: true },
  { kind: 'codex', cli: 'codex', server: () => new OpenAiResponsesServer(), writeCall: { name: 'exec_command', input: { cmd: 'echo asked > asked.txt' } }, relaysDenyMessage: false },
  { kind: 'pi', cli: 'pi', server: () => new AnthropicMessagesServer(), writeCall: { name: 'bash', input: { command: 'echo asked > asked.txt' } }, relaysDenyMessage: true },
];

describe.each(askCases)('real $kind in always_ask mode', ({ kind, cli, server: makeServer, writeCall, relaysDenyMessage }) => {
  const { binDir, reason } = harnessBinDir(cli);
  if (binDir === null) {
    it.skip(`skipped: ${reason}`, () => undefined);
    console.warn(`real ${kind} always_ask tests skipped: ${reason}`);
    return;
  }
  const adapter = harnessAdapterFor(kind);
  let server: ScriptedModelServer;
  let root: string;
  beforeEach(async () => {
    server = await makeServer().start();
    root = mkdtempSync(join(tmpdir(), `berth-${kind}-ask-`));
  });
  afterEach(async () => {
    await server.close();
    rmSync(root, { recursive: true, force: true });
  });

  // Every tool asks: what all three honour (Codex and Pi ask for all tools or none).
  const askingAgent = testAgentConfig({ tools: [{ type: 'agent_toolset_20260401', default_config: { permission_policy: { type: 'always_ask' } } }] });
  const askTurn = (decision: 'allow' | 'deny') => {
    server.script(reply.toolCall(writeCall.name, writeCall.input), reply.text(`after ${decision}`));
    const input: TurnInput = {
      prompt: 'write asked.txt',
      agent: askingAgent,
      resumeId: null,
      model: { baseUrl: server.url, apiKeyEnv: 'BERTH_MODEL_API_KEY' },
      cwd: join(root, 'work'),
      home: join(root, 'home'),
    };
    const asked: string[] = [];
    const turn = runLocalTurn({
      adapter,
      input,
      binDir,
      secrets: SECRETS,
      onConfirmation: (pending) => {
        asked.push(pending.toolUseId);
        // Nothing ran before the answer.
        expect(existsSync(join(input.cwd, 'asked.txt'))).toBe(false);
        return { result: decision, denyMessage: decision === 'deny' ? 'not this time' : null };
      },
    });
    return { turn, asked, cwd: input.cwd };
  };

  it('holds the tool use for confirmation, runs it when allowed', async () => {
    const { turn, asked, cwd } = askTurn('allow');
    const result = await turn;
    recordFixture(kind, 'ask-allowed', result.stdoutLines, root);

    const toolUse = result.outputs.find((o) => o.kind === 'tool_use');
    expect(toolUse).toMatchObject({ name: 'bash', needs_confirmation: true });
    expect(asked).toEqual([toolUse?.kind === 'tool_use' ? toolUse.tool_use_id : '']);
    expect(readFileSync(join(cwd, 'asked.txt'), 'utf8')).toBe('asked\n');
    expect(messages(result.outputs).at(-1)).toBe('after allow');
    expect(result.terminal).toEqual({ ok: true, interrupted: false, error: null });
  }, 90_000);

  it('continues the same conversation in a second always_ask turn', async () => {
    const first = await askTurn('allow').turn;
    expect(first.harnessSessionId).not.toBeNull();
    server.script(reply.text('second answer'));
    const second = await runLocalTurn({
      adapter,
      input: {
        prompt: 'and now?',
        agent: askingAgent,
        resumeId: first.harnessSessionId,
        model: { baseUrl: server.url, apiKeyEnv: 'BERTH_MODEL_API_KEY' },
        cwd: join(root, 'work'),
        home: join(root, 'home'),
      },
      binDir,
      secrets: SECRETS,
    });
    expect(messages(second.outputs).at(-1)).toBe('second answer');
    expect(second.harnessSessionId).toBe(first.harnessSessionId);
    // The model sees the first turn: its prompt, the tool call and the answer.
    expect(JSON.stringify(server.modelRequests.at(-1)?.body)).toContain('write asked.txt');
    expect(JSON.stringify(server.modelRequests.at(-1)?.body)).toContain('after allow');
  }, 120_000);

  it('does not run a denied tool, and the model hears of it', async () => {
    const { turn, asked, cwd } = askTurn('deny');
    const result = await turn;
    recordFixture(kind, 'ask-denied', result.stdoutLines, root);

    expect(asked).toHaveLength(1);
    expect(existsSync(join(cwd, 'asked.txt'))).toBe(false);
    expect(result.outputs.find((o) => o.kind === 'tool_result')).toMatchObject({ is_error: true });
    if (relaysDenyMessage) {
      expect(result.outputs.find((o) => o.kind === 'tool_result')).toMatchObject({ content: [{ type: 'text', text: 'not this time' }] });
      expect(JSON.stringify(server.modelRequests.at(-1)?.body)).toContain('not this time');
    }
    expect(server.modelRequests).toHaveLength(2);
    expect(result.terminal).toEqual({ ok: true, interrupted: false, error: null });
  }, 90_000);
});

/** The names of the tools a model request offered (Messages API `name`, Responses API `name`, MCP namespaces included). */
const offeredTools = (body: unknown): string[] => ((body as { tools?: { name?: string }[] }).tools ?? []).map((t) => t.name ?? '');

interface AgentCase {
  readonly kind: 'claude-code' | 'codex' | 'pi';
  readonly cli: 'claude' | 'codex' | 'pi';
  readonly server: () => ScriptedModelServer;
  readonly model: string;
  /** A toolset tool the agent disables, and the name the harness would have offered it under. */
  readonly disabled: { tool: 'web_fetch' | 'web_search' | 'bash'; offeredAs: string };
  /** How the model calls the MCP server's lookup tool, when the harness has MCP. */
  readonly mcpCall: { name: string; namespace?: string } | null;
}

const agentCases: AgentCase[] = [
  { kind: 'claude-code', cli: 'claude', server: () => new AnthropicMessagesServer(), model: 'claude-opus-4-7', disabled: { tool: 'web_fetch', offeredAs: 'WebFetch' }, mcpCall: { name: 'mcp__docs__lookup' } },
  { kind: 'codex', cli: 'codex', server: () => new OpenAiResponsesServer(), model: 'berth-model', disabled: { tool: 'web_search', offeredAs: 'web_search' }, mcpCall: { name: 'lookup', namespace: 'mcp__docs' } },
  { kind: 'pi', cli: 'pi', server: () => new AnthropicMessagesServer(), model: 'claude-opus-4-7', disabled: { tool: 'bash', offeredAs: 'bash' }, mcpCall: null },
];

describe.each(agentCases)('the agent definition reaches real $kind', ({ kind, cli, server: makeServer, model, disabled, mcpCall }) => {
  const { binDir, reason } = harnessBinDir(cli);
  if (binDir === null) {
    it.skip(`skipped: ${reason}`, () => undefined);
    console.warn(`real ${kind} agent tests skipped: ${reason}`);
    return;
  }
  const adapter = harnessAdapterFor(kind);
  let server: ScriptedModelServer;
  let mcp: TestMcpServer;
  let root: string;
  beforeEach(async () => {
    server = await makeServer().start();
    mcp = await new TestMcpServer().start();
    root = mkdtempSync(join(tmpdir(), `berth-${kind}-agent-`));
  });
  afterEach(async () => {
    await server.close();
    await mcp.close();
    rmSync(root, { recursive: true, force: true });
  });
  const inputFor = (agent: Parameters<typeof testAgentConfig>[0]): TurnInput => ({
    prompt: 'Look up the answer',
    agent: testAgentConfig({ model, ...agent }),
    resumeId: null,
    model: { baseUrl: server.url, apiKeyEnv: 'BERTH_MODEL_API_KEY' },
    cwd: join(root, 'work'),
    home: join(root, 'home'),
  });

  it('asks the model for the agent\'s model id with its system prompt, and does not offer a disabled tool', async () => {
    server.script(reply.text('Ahoy.'));
    const input = inputFor({ system: 'You are a pirate. Say ahoy.', tools: [{ type: 'agent_toolset_20260401', configs: [{ name: disabled.tool, enabled: false }] }] });

    const turn = await runLocalTurn({ adapter, input, binDir, secrets: SECRETS });

    expect(turn.terminal).toEqual({ ok: true, interrupted: false, error: null });
    const request = server.modelRequests[0]?.body as { model?: string };
    expect(request.model).toBe(model);
    expect(JSON.stringify(request)).toContain('You are a pirate. Say ahoy.');
    expect(offeredTools(request)).not.toContain(disabled.offeredAs);
    expect(offeredTools(request).length).toBeGreaterThan(0);
  }, 90_000);

  if (mcpCall !== null) {
    it('calls a tool of the agent\'s MCP server (streamable HTTP), reported as an MCP call, and does not offer its disabled tool', async () => {
      server.script(reply.toolCall(mcpCall.name, { key: 'treasure' }, mcpCall.namespace ? { namespace: mcpCall.namespace } : {}), reply.text('Found it.'));
      const input = inputFor({
        mcp_servers: [{ type: 'url', name: 'docs', url: mcp.url }],
        tools: [{ type: 'agent_toolset_20260401' }, { type: 'mcp_toolset', mcp_server_name: 'docs', configs: [{ name: 'shout', enabled: false }] }],
      });

      const turn = await runLocalTurn({ adapter, input, binDir, secrets: SECRETS });
      recordFixture(kind, 'mcp-turn', turn.stdoutLines, root);

      expect(turn.terminal).toEqual({ ok: true, interrupted: false, error: null });
      expect(mcp.calls.map((c) => [c.tool, c.arguments])).toEqual([['lookup', { key: 'treasure' }]]);
      const use = turn.outputs.find((o) => o.kind === 'mcp_tool_use');
      expect(use).toMatchObject({ server_name: 'docs', name: 'lookup', input: { key: 'treasure' } });
      expect(turn.outputs.find((o) => o.kind === 'mcp_tool_result')).toMatchObject({ tool_use_id: use?.kind === 'mcp_tool_use' ? use.tool_use_id : '', is_error: false });
      expect(JSON.stringify(server.modelRequests.at(-1)?.body)).toContain(lookupAnswer('treasure'));
      expect(JSON.stringify(offeredTools(server.modelRequests[0]?.body))).not.toContain('shout');
    }, 90_000);

    it("offers the tools of an MCP server slow to start (3 s to answer initialize) on the turn's first model request", async () => {
      const slow = await new TestMcpServer({ initializeDelayMs: 3_000 }).start();
      try {
        server.script(reply.text('Noted.'));
        const input = inputFor({ mcp_servers: [{ type: 'url', name: 'docs', url: slow.url }], tools: [{ type: 'agent_toolset_20260401' }, { type: 'mcp_toolset', mcp_server_name: 'docs' }] });

        const turn = await runLocalTurn({ adapter, input, binDir, secrets: SECRETS });

        expect(turn.terminal).toEqual({ ok: true, interrupted: false, error: null });
        // The server's own description of its tool, whatever shape the harness offers it in.
        expect(JSON.stringify((server.modelRequests[0]?.body as { tools?: unknown }).tools)).toContain('Looks up the value stored under a key.');
      } finally {
        await slow.close();
      }
    }, 90_000);
  }
});

describe('real claude-code with one always_ask tool', () => {
  const { binDir, reason } = harnessBinDir('claude');
  if (binDir === null) {
    it.skip(`skipped: ${reason}`, () => undefined);
    return;
  }
  it('asks only for that tool: the other tool of the same turn runs without asking', async () => {
    const server = await new AnthropicMessagesServer().start();
    const root = mkdtempSync(join(tmpdir(), 'berth-claude-mixed-'));
    try {
      server.script(
        reply.toolCall('Write', { file_path: 'free.txt', content: 'no question asked\n' }),
        reply.toolCall('Bash', { command: 'echo asked > asked.txt', description: 'write asked.txt' }),
        reply.text('both done'),
      );
      const asked: string[] = [];
      const input: TurnInput = {
        prompt: 'write two files',
        agent: testAgentConfig({ tools: [{ type: 'agent_toolset_20260401', configs: [{ name: 'bash', permission_policy: { type: 'always_ask' } }] }] }),
        resumeId: null,
        model: { baseUrl: server.url, apiKeyEnv: 'BERTH_MODEL_API_KEY' },
        cwd: join(root, 'work'),
        home: join(root, 'home'),
      };
      const adapter = harnessAdapterFor('claude-code');
      const turn = await runLocalTurn({ adapter, input, binDir, secrets: SECRETS, onConfirmation: (p) => (asked.push(p.toolUseId), { result: 'allow', denyMessage: null }) });

      const uses = turn.outputs.filter((o) => o.kind === 'tool_use');
      expect(uses.map((u) => u.kind === 'tool_use' && [u.name, u.needs_confirmation])).toEqual([['write', false], ['bash', true]]);
      expect(asked).toEqual([uses[1]?.kind === 'tool_use' ? uses[1].tool_use_id : '']);
      expect(readFileSync(join(input.cwd, 'free.txt'), 'utf8')).toBe('no question asked\n');
      expect(readFileSync(join(input.cwd, 'asked.txt'), 'utf8')).toBe('asked\n');
    } finally {
      await server.close();
      rmSync(root, { recursive: true, force: true });
    }
  }, 90_000);
});

interface CustomToolCase {
  readonly kind: 'claude-code' | 'codex' | 'pi';
  readonly cli: 'claude' | 'codex' | 'pi';
  readonly server: () => ScriptedModelServer;
  readonly model: string;
  /** How the model calls the custom tool `get_weather`, as the harness offers it. */
  readonly call: { name: string; namespace?: string };
  /** The harness's MCP client (or extension) names the call with the id it prints. */
  readonly namesCall: boolean;
  /** The agent's toolset asks before every tool (Codex then runs app-server, which asks before an MCP call too). */
  readonly asking?: true;
}

const customToolCases: CustomToolCase[] = [
  { kind: 'claude-code', cli: 'claude', server: () => new AnthropicMessagesServer(), model: 'claude-opus-4-7', call: { name: 'mcp__berth__get_weather' }, namesCall: true },
  { kind: 'codex', cli: 'codex', server: () => new OpenAiResponsesServer(), model: 'berth-model', call: { name: 'get_weather', namespace: 'mcp__berth' }, namesCall: false },
  { kind: 'pi', cli: 'pi', server: () => new AnthropicMessagesServer(), model: 'claude-opus-4-7', call: { name: 'berth__get_weather' }, namesCall: true },
  { kind: 'codex', cli: 'codex', server: () => new OpenAiResponsesServer(), model: 'berth-model', call: { name: 'get_weather', namespace: 'mcp__berth' }, namesCall: false, asking: true },
  { kind: 'pi', cli: 'pi', server: () => new AnthropicMessagesServer(), model: 'claude-opus-4-7', call: { name: 'berth__get_weather' }, namesCall: true, asking: true },
];

/** The adapter with its plan's sandbox socket path (/run/berth/tools.sock) moved to `socket`: a host test cannot listen there. */
function withToolsSocket(adapter: HarnessAdapter, socket: string): HarnessAdapter {
  const relocate = (text: string) => text.split(CUSTOM_TOOLS_SOCKET).join(socket);
  return Object.assign(Object.create(adapter) as HarnessAdapter, {
    buildTurn: (input: TurnInput): TurnPlan => {
      const plan = adapter.buildTurn(input);
      return { ...plan, argv: plan.argv.map(relocate), files: plan.files.map((f) => ({ ...f, content: relocate(f.content) })) };
    },
  });
}

describe.each(customToolCases)('custom tools on real $kind (asking toolset: $asking)', ({ kind, cli, server: makeServer, model, call, namesCall, asking }) => {
  const { binDir, reason } = harnessBinDir(cli);
  if (binDir === null) {
    it.skip(`skipped: ${reason}`, () => undefined);
    console.warn(`real ${kind} custom tool tests skipped: ${reason}`);
    return;
  }
  it("offers the agent's custom tool, hands its call to the platform's socket, reads it as custom_tool_use, and the turn goes on with the platform's answer", async () => {
    const server = await makeServer().start();
    const root = mkdtempSync(join(tmpdir(), `berth-${kind}-custom-`));
    // The manager's end of the socket, reduced to what the harness sees: one request line, one answer line.
    const requests: unknown[] = [];
    const platform = createServer((socket) => {
      let buffer = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => {
        buffer += chunk;
        if (!buffer.includes('\n')) return;
        requests.push(JSON.parse(buffer.slice(0, buffer.indexOf('\n'))));
        socket.end(`${JSON.stringify({ content: [{ type: 'text', text: 'sunny, 21°C' }], isError: false })}\n`);
      });
    });
    const socket = join(root, 'tools.sock');
    await new Promise<void>((resolve) => platform.listen(socket, resolve));
    try {
      server.script(reply.toolCall(call.name, { city: 'Oslo' }, call.namespace ? { namespace: call.namespace } : {}), reply.text('It is sunny.'));
      const input: TurnInput = {
        prompt: 'What is the weather in Oslo?',
        agent: testAgentConfig({
          model,
          tools: [
            { type: 'agent_toolset_20260401', ...(asking ? { default_config: { permission_policy: { type: 'always_ask' as const } } } : {}) },
            { type: 'custom', name: 'get_weather', description: 'The weather in a city', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
          ],
        }),
        resumeId: null,
        model: { baseUrl: server.url, apiKeyEnv: 'BERTH_MODEL_API_KEY' },
        cwd: join(root, 'work'),
        home: join(root, 'home'),
      };

      const asked: string[] = [];
      const onConfirmation = (pending: { toolUseId: string }) => (asked.push(pending.toolUseId), { result: 'deny' as const, denyMessage: 'no' });
      const turn = await runLocalTurn({ adapter: withToolsSocket(harnessAdapterFor(kind), socket), input, binDir, secrets: SECRETS, onConfirmation });
      recordFixture(kind, asking ? 'custom-tool-ask' : 'custom-tool-turn', turn.stdoutLines, root);

      expect(turn.terminal).toEqual({ ok: true, interrupted: false, error: null });
      const use = turn.outputs.find((o) => o.kind === 'custom_tool_use');
      expect(use).toMatchObject({ name: 'get_weather', input: { city: 'Oslo' } });
      // The result is the client's to record: the harness's own copy of it is not an output.
      expect(turn.outputs.some((o) => o.kind === 'tool_result' || o.kind === 'mcp_tool_result' || o.kind === 'tool_use' || o.kind === 'mcp_tool_use')).toBe(false);
      expect(requests).toEqual([{ tool_use_id: namesCall && use?.kind === 'custom_tool_use' ? use.tool_use_id : null, name: 'get_weather', input: { city: 'Oslo' } }]);
      expect(JSON.stringify(server.modelRequests[0]?.body)).toContain('The weather in a city');
      expect(JSON.stringify(server.modelRequests[1]?.body)).toContain('sunny, 21°C');
      expect(messages(turn.outputs).at(-1)).toBe('It is sunny.');
      // A custom tool call never waits for a tool confirmation: the client's result is its answer.
      expect(asked).toEqual([]);
    } finally {
      await new Promise((resolve) => platform.close(resolve));
      await server.close();
      rmSync(root, { recursive: true, force: true });
    }
  }, 90_000);
});
