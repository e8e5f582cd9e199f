import type { AgentOutput, CommandData, CommandType, RecordedEvent, TurnCheckpoint } from '@berth/contracts';
import { commandFor } from '@berth/contracts/testing';
import type { CommandBus, TranscriptMirror } from '@berth/ports';

/**
 * Stands in for the sandbox-manager until turns run in real sandboxes: binds a sandbox when one is
 * requested and answers every turn with one agent message ("echo: <text>") and a completion. A
 * message starting with "tool:" first asks to run a tool that needs confirmation, and finishes the
 * turn once the confirmation arrives. Given the transcript mirror, each completion carries a checkpoint
 * as the sandbox-manager's does (the mirror's sizes, and a workspace snapshot it pretends to take).
 */
export class FakeTurnRunner {
  private readonly generation = new Map<string, number>();
  private readonly waitingTurn = new Map<string, string>();
  private readonly lastText = new Map<string, string>();
  private readonly confirmation = new Map<string, 'allow' | 'deny'>();
  private readonly stop: () => void;
  private chain: Promise<unknown> = Promise.resolve();

  /** `onEvent` delivers every session's events (in memory, or a NATS subscription) and returns an unsubscribe. */
  constructor(
    private readonly bus: CommandBus,
    onEvent: (listener: (event: RecordedEvent) => void) => () => void,
    private readonly transcripts: TranscriptMirror | null = null,
  ) {
    this.stop = onEvent((event) => {
      this.chain = this.chain.then(() => this.react(event)).catch(() => undefined);
    });
  }

  close(): void {
    this.stop();
  }

  private async react(event: RecordedEvent): Promise<void> {
    const sessionId = event.session_id;
    if (event.type === 'SandboxRequested') {
      await this.send(sessionId, 'BindSandbox', { sandbox_id: `sbx_fake_${event.data.generation}`, generation: event.data.generation, expires_at: null, warm: false });
    } else if (event.type === 'SandboxBound') {
      this.generation.set(sessionId, event.data.generation);
      const waiting = this.waitingTurn.get(sessionId);
      if (waiting) await this.answer(sessionId, waiting);
    } else if (event.type === 'TurnStarted') {
      if (this.generation.has(sessionId)) await this.answer(sessionId, event.data.turn_id);
      else this.waitingTurn.set(sessionId, event.data.turn_id);
    } else if (event.type === 'UserMessageReceived') {
      this.lastText.set(event.data.turn_id, event.data.content.map((b) => (b.type === 'text' ? b.text : '')).join(''));
    } else if (event.type === 'ToolUseConfirmed') {
      this.confirmation.set(event.data.turn_id, event.data.result);
    } else if (event.type === 'TurnResumed') {
      await this.finishToolTurn(sessionId, event.data.turn_id);
    }
  }

  private async finishToolTurn(sessionId: string, turnId: string): Promise<void> {
    const generation = this.generation.get(sessionId) ?? 1;
    const allowed = this.confirmation.get(turnId) === 'allow';
    await this.send(sessionId, 'RecordAgentOutput', {
      turn_id: turnId,
      generation,
      offset: 1,
      outputs: [
        { kind: 'tool_result', tool_use_id: 'toolu_fake', content: [{ type: 'text', text: allowed ? 'ran' : 'denied' }], is_error: !allowed },
        { kind: 'message', content: [{ type: 'text', text: allowed ? 'done' : 'skipped' }] },
      ],
      harness_session_id: null,
    });
    await this.complete(sessionId, turnId, generation);
  }

  private async complete(sessionId: string, turnId: string, generation: number): Promise<void> {
    const checkpoint: TurnCheckpoint | undefined =
      this.transcripts === null ? undefined : { transcript: [...(await this.transcripts.sizes(sessionId))], workspace: { bytes: 0, files: 0 }, dropped_turn_ids: [] };
    await this.send(sessionId, 'CompleteTurn', { turn_id: turnId, generation, interrupted: false, harness_session_id: null, ...(checkpoint ? { checkpoint } : {}) });
  }

  private async answer(sessionId: string, turnId: string): Promise<void> {
    this.waitingTurn.delete(sessionId);
    const generation = this.generation.get(sessionId) ?? 1;
    const said = this.lastText.get(turnId) ?? '';
    if (said.startsWith('tool:')) {
      const input = { command: said.slice(5).trim() };
      const outputs: AgentOutput[] = [{ kind: 'tool_use', tool_use_id: 'toolu_fake', name: 'bash', input, needs_confirmation: true }];
      await this.send(sessionId, 'RecordAgentOutput', { turn_id: turnId, generation, offset: 0, outputs, harness_session_id: null });
      return;
    }
    const text = `echo: ${said}`;
    await this.send(sessionId, 'RecordAgentOutput', { turn_id: turnId, generation, offset: 0, outputs: [{ kind: 'message', content: [{ type: 'text', text }] }], harness_session_id: null });
    await this.complete(sessionId, turnId, generation);
  }

  private async send<T extends CommandType>(sessionId: string, type: T, data: CommandData<T>): Promise<void> {
    await this.bus.send(commandFor(type, sessionId, data, { actor: 'fake-turn-runner' }));
  }
}
