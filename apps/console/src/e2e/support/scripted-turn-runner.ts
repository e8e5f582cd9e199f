import type { AgentOutput, CommandData, CommandType, RecordedEvent } from '@berth/contracts';
import { commandFor } from '@berth/contracts/testing';
import type { CommandBus } from '@berth/ports';
import { WORKSPACE } from './scripted-workspace';

type Feed = { onEvent(listener: (event: RecordedEvent) => void): () => void };

/**
 * Plays the sandbox-manager and a harness with a scripted model for browser tests: binds a
 * sandbox when asked, and answers each turn with one tool use (`bash ls`), its result and a
 * closing message. A message containing "(ask)" makes the tool use wait for approval first; the
 * turn then goes on according to the answer (allowed → the tool runs; denied → an error result).
 * Each completed turn reports the checkpoint the sandbox-manager reports on loop workspaces (a
 * snapshot of the scripted workspace, no harness transcript), so its message can be forked from.
 */
/** The per-turn snapshot of the scripted workspace, as the sandbox-manager reports one. */
const SNAPSHOT = { bytes: Object.values(WORKSPACE).reduce((sum, content) => sum + content.length, 0), files: Object.keys(WORKSPACE).length };

export const SCRIPT = {
  tool: 'bash',
  input: { command: 'ls' },
  output: 'README.md\nsrc',
  answer: 'There are two entries: README.md and src.',
  deniedAnswer: 'Understood, I did not run it.',
} as const;

/** Outputs in the first batch (thinking, tool use): the second batch's offset. */
const FIRST_BATCH = 2;

export class ScriptedTurnRunner {
  private readonly generation = new Map<string, number>();
  private readonly waitingTurn = new Map<string, string>();
  private readonly texts = new Map<string, string>();
  private readonly stop: () => void;
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly bus: CommandBus,
    feed: Feed,
    /** Called before each turn completes, as the sandbox-manager captures outputs then. */
    private readonly beforeComplete: (sessionId: string) => Promise<void> = async () => undefined,
  ) {
    // One event at a time, in journal order, like a consumer.
    this.stop = feed.onEvent((event) => {
      this.chain = this.chain.then(() => this.react(event)).catch(() => undefined);
    });
  }

  close(): void {
    this.stop();
  }

  private async react(event: RecordedEvent): Promise<void> {
    const s = event.session_id;
    switch (event.type) {
      case 'SandboxRequested':
        await this.send(s, 'BindSandbox', { sandbox_id: `sbx_e2e_${event.data.generation}`, generation: event.data.generation, expires_at: null, warm: true });
        return;
      case 'SandboxBound': {
        this.generation.set(s, event.data.generation);
        const waiting = this.waitingTurn.get(s);
        if (waiting) await this.begin(s, waiting);
        return;
      }
      case 'UserMessageReceived':
        this.texts.set(event.data.turn_id, event.data.content.map((b) => (b.type === 'text' ? b.text : '')).join(''));
        return;
      case 'TurnStarted':
        if (this.generation.has(s)) await this.begin(s, event.data.turn_id);
        else this.waitingTurn.set(s, event.data.turn_id);
        return;
      case 'ToolUseConfirmed':
        await this.finish(s, event.data.turn_id, FIRST_BATCH, event.data.result === 'allow');
        return;
      default:
        return;
    }
  }

  private async begin(sessionId: string, turnId: string): Promise<void> {
    this.waitingTurn.delete(sessionId);
    const ask = (this.texts.get(turnId) ?? '').includes('(ask)');
    await this.output(sessionId, turnId, 0, [{ kind: 'thinking' }, { kind: 'tool_use', tool_use_id: 'toolu_1', name: SCRIPT.tool, input: { ...SCRIPT.input }, needs_confirmation: ask }]);
    if (!ask) await this.finish(sessionId, turnId, FIRST_BATCH, true);
  }

  private async finish(sessionId: string, turnId: string, offset: number, allowed: boolean): Promise<void> {
    const result: AgentOutput = allowed
      ? { kind: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: SCRIPT.output }], is_error: false }
      : { kind: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'Permission denied by the user' }], is_error: true };
    const answer: AgentOutput = { kind: 'message', content: [{ type: 'text', text: allowed ? SCRIPT.answer : SCRIPT.deniedAnswer }] };
    await this.output(sessionId, turnId, offset, [result, answer, { kind: 'usage', usage: { input_tokens: 120, output_tokens: 30, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } }]);
    await this.beforeComplete(sessionId);
    await this.send(sessionId, 'CompleteTurn', {
      turn_id: turnId,
      generation: this.generation.get(sessionId) ?? 1,
      interrupted: false,
      harness_session_id: null,
      checkpoint: { transcript: [], workspace: SNAPSHOT, dropped_turn_ids: [] },
    });
  }

  private output(sessionId: string, turnId: string, offset: number, outputs: AgentOutput[]): Promise<void> {
    return this.send(sessionId, 'RecordAgentOutput', { turn_id: turnId, generation: this.generation.get(sessionId) ?? 1, offset, outputs, harness_session_id: null });
  }

  private async send<T extends CommandType>(sessionId: string, type: T, data: CommandData<T>): Promise<void> {
    await this.bus.send(commandFor(type, sessionId, data, { actor: 'scripted-turn-runner' }));
  }
}
