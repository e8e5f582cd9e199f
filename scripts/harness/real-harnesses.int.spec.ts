import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentOutput } from '@berth/contracts';
import { harnessAdapterFor, type TurnInput } from '@berth/harness';
import { AnthropicMessagesServer, OpenAiResponsesServer, reply, type ScriptedModelServer } from '@berth/testing';
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
}

const cases: Case[] = [
  { kind: 'claude-code', cli: 'claude', server: () => new AnthropicMessagesServer(), writeFileCall: { name: 'Bash', input: { command: 'echo hello > out.txt', description: 'write out.txt' } } },
  { kind: 'codex', cli: 'codex', server: () => new OpenAiResponsesServer(), writeFileCall: { name: 'exec_command', input: { cmd: 'echo hello > out.txt' } } },
  { kind: 'pi', cli: 'pi', server: () => new AnthropicMessagesServer(), writeFileCall: { name: 'bash', input: { command: 'echo hello > out.txt' } } },
];

describe.each(cases)('real $kind against a scripted model', ({ kind, cli, server: makeServer, writeFileCall }) => {
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
      systemPrompt: 'You are the Berth test agent.',
      resumeId: null,
      model: { baseUrl: server.url, apiKeyEnv: 'BERTH_MODEL_API_KEY' },
      permissionMode: 'always_allow',
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

  const askTurn = (decision: 'allow' | 'deny') => {
    server.script(reply.toolCall(writeCall.name, writeCall.input), reply.text(`after ${decision}`));
    const input: TurnInput = {
      prompt: 'write asked.txt',
      resumeId: null,
      model: { baseUrl: server.url, apiKeyEnv: 'BERTH_MODEL_API_KEY' },
      permissionMode: 'always_ask',
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
    expect(toolUse).toMatchObject({ needs_confirmation: true });
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
        resumeId: first.harnessSessionId,
        model: { baseUrl: server.url, apiKeyEnv: 'BERTH_MODEL_API_KEY' },
        permissionMode: 'always_ask',
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

