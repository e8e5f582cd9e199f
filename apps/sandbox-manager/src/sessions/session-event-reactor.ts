import type { RecordedEvent } from '@berth/contracts';
import type { CommandBus, Logger, SandboxRuntime } from '@berth/ports';
import { SandboxLabels } from '@berth/sandbox-domain';
import type { BoundSandboxes } from '../sandboxes/bound-sandboxes';
import type { EnvironmentSettingsReader } from '../sandboxes/environment-settings';
import type { SandboxService } from '../sandboxes/sandbox-service';
import type { RunningTurns } from '../turns/running-turns';
import type { TurnRunner } from '../turns/turn-runner';
import type { ManagerCommands } from './manager-commands';
import { sendReliably } from './send-reliably';
import type { TurnAssignment } from '../turns/turn-assignment';
import { harnessToolUseId, promptOf, type SessionFacts, type SessionFactsReader } from './session-facts';

type EventOf<T extends RecordedEvent['type']> = Extract<RecordedEvent, { type: T }>;

export type ReactorDeps = Readonly<{
  facts: SessionFactsReader;
  sandboxes: SandboxService;
  turns: TurnRunner;
  running: RunningTurns;
  bound: BoundSandboxes;
  settings: EnvironmentSettingsReader;
  runtime: SandboxRuntime;
  commands: ManagerCommands;
  bus: CommandBus;
  log: Logger;
  scopeLabels: Readonly<Record<string, string>>;
}>;

/**
 * What the sandbox-manager does for each session event it listens to. Every handler re-reads the
 * session's journal and acts on the state it finds, so a redelivered or late event is harmless.
 */
export class SessionEventReactor {
  /** Interrupts that arrived before this process started the turn's harness. */
  private readonly earlyInterrupts = new Set<string>();

  constructor(private readonly deps: ReactorDeps) {}

  async sandboxRequested(event: EventOf<'SandboxRequested'>): Promise<void> {
    const { state } = await this.deps.facts.load(event.session_id);
    if (state.sandbox_request?.generation !== event.data.generation) return;
    if (state.lifecycle === 'TERMINATED' || state.lifecycle === 'DELETED') return;
    await this.deps.sandboxes
      .provide({ sessionId: event.session_id, generation: event.data.generation, ownerId: state.owner_id, environmentId: state.environment_id })
      .catch((error: unknown) => this.deps.log.warn('no sandbox for the session', { session_id: event.session_id, err: error }));
  }

  /** Runs the turn to its end; `heartbeat` keeps the delivery in flight meanwhile (a crash redelivers it). */
  async turnStarted(event: EventOf<'TurnStarted'>, delivery: Readonly<{ redelivered: boolean }>): Promise<void> {
    const sessionId = event.session_id;
    const turnId = event.data.turn_id;
    let facts = await this.deps.facts.load(sessionId);
    let { state } = facts;
    if (state.current_turn?.id !== turnId) return;
    if ((state.sandbox === null || state.runtime_unavailable) && state.sandbox_request !== null) {
      const provided = await this.deps.sandboxes
        .provide({ sessionId, generation: state.sandbox_request.generation, ownerId: state.owner_id, environmentId: state.environment_id })
        .catch(() => null);
      if (provided === null || !provided.bound) return;
      facts = await this.deps.facts.load(sessionId);
      state = facts.state;
    }
    const turn = state.current_turn;
    if (turn?.id !== turnId) return;
    if (state.sandbox === null || state.runtime_unavailable) {
      await this.fail(sessionId, turnId, 'sandbox_lost', 'the session has no sandbox to run the turn in');
      return;
    }
    if (turn.status === 'INTERRUPTING' || this.earlyInterrupts.delete(turnId)) {
      await sendReliably(
        this.deps.bus,
        this.deps.commands.make('CompleteTurn', sessionId, `done_${sessionId}_${turnId}`, { turn_id: turnId, generation: state.sandbox.generation, interrupted: true, harness_session_id: null }),
        this.deps.log,
      );
      return;
    }
    const assignment = await this.assignmentFor(sessionId, facts, turnId, delivery.redelivered);
    if (assignment === null) {
      await this.fail(sessionId, turnId, 'input_not_delivered', 'the turn has no user message in the journal');
      return;
    }
    this.deps.bound.touch(sessionId);
    await this.deps.turns.run(assignment);
    this.deps.bound.touch(sessionId);
  }

  /**
   * The turn-reconciler asks to pick up a turn whose harness an earlier process started (still
   * running, or finished with its output file complete): the runner replays the file from the
   * last recorded offset and follows it. False when the turn is not current on that generation.
   */
  async resumeTurn(sessionId: string, turnId: string, generation: number): Promise<boolean> {
    const facts = await this.deps.facts.load(sessionId);
    const { state } = facts;
    if (state.current_turn?.id !== turnId || state.sandbox?.generation !== generation || state.runtime_unavailable) return false;
    const assignment = await this.assignmentFor(sessionId, facts, turnId, true);
    if (assignment === null) return false;
    void this.deps.turns.run(assignment).catch((error: unknown) => this.deps.log.error('resumed run failed', { session_id: sessionId, turn_id: turnId, err: error }));
    return true;
  }

  private async assignmentFor(sessionId: string, facts: SessionFacts, turnId: string, mayHaveStarted: boolean): Promise<TurnAssignment | null> {
    const { state } = facts;
    const prompt = promptOf(facts.events, turnId);
    if (prompt === null || state.sandbox === null || state.current_turn === null) return null;
    const settings = await this.deps.settings.read(state.owner_id, state.environment_id);
    return {
      sessionId,
      turnId,
      generation: state.sandbox.generation,
      sandboxId: state.sandbox.sandbox_id,
      harness: state.harness,
      permissionMode: state.permission_mode,
      prompt,
      resumeId: state.conversation_ended ? null : state.harness_session_id,
      model: settings.model,
      lastRecordedOffset: state.current_turn.last_offset,
      mayHaveStarted,
    };
  }

  async interruptRequested(event: EventOf<'InterruptRequested'>): Promise<void> {
    const running = this.deps.running.get(event.session_id);
    if (running !== undefined && (event.data.turn_id === null || running.turnId === event.data.turn_id)) running.interrupt();
    else if (event.data.turn_id !== null) this.earlyInterrupts.add(event.data.turn_id);
  }

  async toolUseConfirmed(event: EventOf<'ToolUseConfirmed'>): Promise<void> {
    const running = this.deps.running.get(event.session_id);
    if (running?.turnId !== event.data.turn_id) return;
    const { events } = await this.deps.facts.load(event.session_id);
    const harnessId = harnessToolUseId(events, event.data.tool_use_event_id);
    if (harnessId === null) return;
    const answered = running.confirm(harnessId, { result: event.data.result, denyMessage: event.data.deny_message });
    if (!answered) this.deps.log.warn('tool use had no pending confirmation to answer', { session_id: event.session_id, turn_id: event.data.turn_id, tool_use_id: harnessId });
  }

  /**
   * A pause takes the session's sandboxes away like a terminate; its workspace and transcript mirror
   * live outside the sandbox and stay. A late (or redelivered) pause of a session resumed since
   * releases only the sandbox it named, never the new one.
   */
  async sessionPaused(event: EventOf<'SessionPaused'>): Promise<void> {
    const { state } = await this.deps.facts.load(event.session_id);
    if (state.paused) return this.sessionEnded(event);
    const named = event.data.sandbox_id;
    if (named !== null && state.sandbox?.sandbox_id !== named) {
      this.deps.bound.forget(named);
      await this.deps.sandboxes.release(named);
    }
  }

  /** Terminate and delete take every sandbox of the session away (a running harness goes with it). */
  async sessionEnded(event: EventOf<'SessionTerminated'> | EventOf<'SessionDeleted'> | EventOf<'SessionPaused'>): Promise<void> {
    const sessionId = event.session_id;
    this.deps.running.get(sessionId)?.interrupt();
    this.deps.bound.forgetSession(sessionId);
    const labelled = await this.deps.runtime.list({ ...this.deps.scopeLabels, [SandboxLabels.session]: sessionId });
    const { state } = await this.deps.facts.load(sessionId);
    const names = new Set(labelled.map((c) => c.name));
    if (event.type !== 'SessionDeleted' && event.data.sandbox_id !== null) names.add(event.data.sandbox_id);
    if (state.sandbox !== null) names.add(state.sandbox.sandbox_id);
    await Promise.all([...names].map((name) => this.deps.sandboxes.release(name)));
  }

  async sandboxLost(event: EventOf<'SandboxLost'>): Promise<void> {
    this.deps.bound.forget(event.data.sandbox_id);
  }

  private async fail(sessionId: string, turnId: string, reason: 'sandbox_lost' | 'input_not_delivered', message: string): Promise<void> {
    await sendReliably(this.deps.bus, this.deps.commands.make('FailTurn', sessionId, `fail_${sessionId}_${turnId}`, { turn_id: turnId, reason, message }), this.deps.log);
  }
}
