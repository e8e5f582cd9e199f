import type { RecordedEvent, SessionCommand } from '@berth/contracts';
import { KeyedLock, type Clock, type Workflow } from '@berth/core';
import type { CommandBus, Logger, SessionJournal, TranscriptMirror } from '@berth/ports';
import type { ReconcilerMetrics } from '@berth/telemetry';
import {
  OPEN_TURN_EVENT_TYPES,
  TURN_RECONCILE_EVENT_TYPES,
  turnReconciler,
  type PerformEffect,
  type ReconcilePolicy,
  type SendCommand,
  type TurnReconcileInput,
  type TurnReconcileOutput,
  type TurnReconcileState,
} from '@berth/turns-domain';
import type { ReconcilerCrashPoint } from '../config/reconciler.config';
import { SandboxManagerUnanswered, type OpenTurnDirectory, type SandboxManagerClient } from './sandbox-manager.port';

export type TurnReconcilerDeps = Readonly<{
  journal: SessionJournal;
  transcripts: TranscriptMirror;
  commands: CommandBus;
  sandboxManager: SandboxManagerClient;
  clock: Clock;
  policy: ReconcilePolicy;
  log: Logger;
  metrics: ReconcilerMetrics;
  /** Chaos tests: die (SIGKILL) just before or just after sending a command. */
  crashAt?: ReconcilerCrashPoint | null;
  /** False while this replica cannot be sure it holds the reconciler lease: it then sends and performs nothing. */
  fence?: () => boolean;
}>;

/** One open turn as the service reports it (health endpoint, logs, tests). */
export type OpenTurnStatus = Readonly<{ session_id: string; turn_id: string; attempts: number; waiting_for: string | null }>;

const RECONCILED = new Set<string>(TURN_RECONCILE_EVENT_TYPES);
const OPENS_TURN = new Set<string>(OPEN_TURN_EVENT_TYPES);

/**
 * The shell around the turn-reconciler workflow: keeps one workflow state per session that has a
 * turn open, feeds it session events, sweep ticks and the results of the effects it asks for, and
 * performs its outputs (commands through the CommandBus, effects through the sandbox-manager).
 *
 * Level-triggered: every sweep first reads the journal past what it has folded, so an event the
 * bus lost or delayed (broker restart, kernel crash between commit and publish) is seen anyway.
 * All work on one session is serialized; effects run outside the lock and report back through it.
 */
export class TurnReconcilerService {
  private readonly workflow: Workflow<TurnReconcileInput, TurnReconcileState, TurnReconcileOutput>;
  private readonly sessions = new Map<string, TurnReconcileState>();
  private readonly locks = new KeyedLock();
  private readonly effects = new Set<Promise<void>>();
  private sweeping: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly deps: TurnReconcilerDeps) {
    this.workflow = turnReconciler(deps.policy);
  }

  /** Rebuilds the state of every session whose journal shows an open turn (after a restart). */
  async hydrate(directory: OpenTurnDirectory): Promise<number> {
    const ids = await directory.sessionsWithTurns();
    for (const id of ids) await this.locks.run(id, () => this.load(id));
    return this.sessions.size;
  }

  /** One event from SESSION_EVT. Resolves once it is folded and its outputs are sent or started. */
  async onEvent(event: RecordedEvent): Promise<void> {
    if (!RECONCILED.has(event.type)) return;
    await this.locks.run(event.session_id, async () => {
      if (!this.sessions.has(event.session_id)) {
        // Not tracked: only an event of an open turn is worth reading the journal for (it includes this event).
        if (OPENS_TURN.has(event.type)) await this.load(event.session_id);
        return;
      }
      await this.apply(event.session_id, { kind: 'event', event, now: this.now() });
    });
  }

  /** One sweep: catch up from the journal, then let time pass for every open turn. */
  sweep(): Promise<void> {
    this.sweeping ??= this.sweepAll().finally(() => (this.sweeping = null));
    return this.sweeping;
  }

  startSweeping(intervalMs: number): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.sweep(), intervalMs);
    this.timer.unref();
  }

  /** Stops the sweep timer and waits for the sweep and effects in flight. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.sweeping;
    await this.settled();
  }

  /** Resolves when no effect is in flight (their results included). */
  async settled(): Promise<void> {
    while (this.effects.size > 0) await Promise.allSettled([...this.effects]);
  }

  openTurns(): OpenTurnStatus[] {
    return [...this.sessions.entries()].flatMap(([session_id, s]) =>
      s.turn ? [{ session_id, turn_id: s.turn.turn_id, attempts: s.turn.attempts, waiting_for: s.turn.pending?.step ?? null }] : [],
    );
  }

  private async sweepAll(): Promise<void> {
    for (const sessionId of [...this.sessions.keys()]) {
      await this.locks.run(sessionId, async () => {
        const state = this.sessions.get(sessionId);
        if (!state) return;
        let tail: RecordedEvent[];
        try {
          tail = await this.deps.journal.readEvents(sessionId, { afterSeq: state.last_seq, types: TURN_RECONCILE_EVENT_TYPES });
        } catch (e) {
          // Without the journal we cannot tell a settled turn from a stuck one: wait for the store.
          this.deps.log.warn('sweep: journal unreadable, skipping the session this round', { session_id: sessionId, err: e });
          return;
        }
        for (const event of tail) await this.apply(sessionId, { kind: 'event', event, now: this.now() });
        if (this.sessions.has(sessionId)) await this.apply(sessionId, { kind: 'tick', now: this.now() });
      });
    }
  }

  /** Folds the session's journal from the start; keeps the state only when a turn is open. Runs under the session lock. */
  private async load(sessionId: string): Promise<void> {
    const events = await this.deps.journal.readEvents(sessionId, { types: TURN_RECONCILE_EVENT_TYPES });
    const now = this.now();
    const state = events.reduce<TurnReconcileState>(
      (s, event) => this.workflow.evolve(s, { kind: 'event', event, now }),
      this.workflow.initialState(),
    );
    if (state.turn) this.sessions.set(sessionId, state);
  }

  /** Runs one input through the workflow and performs what it asks. Runs under the session lock. */
  private async apply(sessionId: string, input: TurnReconcileInput): Promise<void> {
    const state = this.sessions.get(sessionId);
    if (!state) return;
    const outputs = this.workflow.decide(input, state);
    const next = this.workflow.evolve(state, input);
    if (next.turn) this.sessions.set(sessionId, next);
    else this.sessions.delete(sessionId);
    for (const output of outputs) {
      if (output.kind === 'command') {
        if (state.turn?.pending?.command?.command_id === output.command_id) {
          this.deps.log.warn(`${describe(output)} not yet in the journal, sending it again`, { session_id: sessionId, turn_id: state.turn.turn_id, command_id: output.command_id });
        }
        await this.send(output);
      } else this.launch(output);
    }
  }

  /**
   * Publishes without waiting for the kernel's answer: the journal tells whether it took effect,
   * and an unanswered command is retried (same id) by the workflow's pending timeout.
   */
  private async send(output: SendCommand): Promise<void> {
    const command = {
      type: output.command.type,
      data: output.command.data,
      meta: { command_id: output.command_id, session_id: output.session_id, actor: 'turn-reconciler', issued_at: this.now() },
    } as SessionCommand;
    const fields = { session_id: output.session_id, turn_id: output.command.data.turn_id, command_id: output.command_id };
    if (!this.fenced()) {
      this.deps.log.warn(`not sending ${describe(output)}: this replica no longer holds the reconciler lease`, fields);
      return;
    }
    this.crashIf('before-command');
    try {
      await this.deps.commands.dispatch(command);
      this.crashIf('after-command');
      this.deps.metrics.verdicts.inc({ command: output.command.type, reason: reasonOf(output) });
      this.deps.log.info(`sent ${describe(output)}`, fields);
    } catch (e) {
      this.deps.log.warn(`could not send ${output.command.type}`, { ...fields, err: e });
    }
  }

  private launch(effect: PerformEffect): void {
    if (!this.fenced()) {
      this.deps.log.warn(`not performing ${effect.effect}: this replica no longer holds the reconciler lease`, { session_id: effect.session_id, turn_id: effect.turn_id });
      return;
    }
    const task = this.perform(effect)
      .then((result) => {
        this.deps.metrics.effects.inc({ effect: effect.effect, outcome: result.kind === 'observed' ? 'observed' : result.kind === 'effect_result' ? result.outcome : result.kind });
        return this.locks.run(effect.session_id, () => this.apply(effect.session_id, result));
      })
      .catch((e) => this.deps.log.warn(`effect ${effect.effect} failed unexpectedly`, { session_id: effect.session_id, turn_id: effect.turn_id, err: e }))
      .finally(() => this.effects.delete(task));
    this.effects.add(task);
  }

  /** Performs one effect; whatever happens becomes an input (a failure is a fact too). */
  private async perform(e: PerformEffect): Promise<TurnReconcileInput> {
    const target = { session_id: e.session_id, turn_id: e.turn_id, generation: e.generation };
    const failed = (error: unknown): TurnReconcileInput => ({
      kind: 'effect_result',
      now: this.now(),
      ...target,
      effect: e.effect,
      outcome: error instanceof SandboxManagerUnanswered ? 'unanswered' : 'failed',
      message: message(error),
    });
    try {
      switch (e.effect) {
        case 'probe': {
          const reply = await this.deps.sandboxManager.probe(target);
          const files = await this.deps.transcripts.files(e.session_id);
          const bytes = files.reduce((n, f) => n + Buffer.byteLength(f.data), 0);
          return {
            kind: 'observed',
            now: this.now(),
            turn_id: reply.turn_id,
            generation: reply.generation,
            facts: { ...reply.facts, transcript: { present: files.length > 0, bytes } },
          };
        }
        case 'reattach': {
          const reply = await this.deps.sandboxManager.reattach({ ...target, from_offset: e.from_offset });
          return { kind: 'effect_result', now: this.now(), ...target, effect: e.effect, outcome: reply.outcome, message: reply.message };
        }
        case 'recoverOutput': {
          const reply = await this.deps.sandboxManager.recoverOutput({ ...target, from_offset: e.from_offset, through_offset: e.through_offset });
          return { kind: 'effect_result', now: this.now(), ...target, effect: e.effect, outcome: reply.outcome, message: reply.message };
        }
        case 'restoreTranscriptAndResume': {
          const reply = await this.deps.sandboxManager.restoreTranscript({ ...target, transcript_bytes: e.transcript_bytes });
          return { kind: 'effect_result', now: this.now(), ...target, effect: e.effect, outcome: reply.outcome, message: reply.message };
        }
      }
    } catch (error) {
      return failed(error);
    }
  }

  /** An unsent command or unperformed effect is retried by the workflow's pending timeout, by whichever replica holds the lease then. */
  private fenced(): boolean {
    return this.deps.fence?.() ?? true;
  }

  private crashIf(point: ReconcilerCrashPoint): void {
    if (this.deps.crashAt === point) process.kill(process.pid, 'SIGKILL');
  }

  private now(): string {
    return this.deps.clock.now().toISOString();
  }
}

const describe = (o: SendCommand): string =>
  o.command.type === 'FailTurn'
    ? `FailTurn(${o.command.data.reason})`
    : o.command.type === 'RecoverTurn'
      ? `RecoverTurn(${o.command.data.method})`
      : o.command.type;

/** The FailTurn reason or RecoverTurn method a verdict carries (empty for other commands). */
const reasonOf = (o: SendCommand): string =>
  o.command.type === 'FailTurn' ? o.command.data.reason : o.command.type === 'RecoverTurn' ? o.command.data.method : '';

const message = (e: unknown): string => (e instanceof Error ? e.message : String(e));
