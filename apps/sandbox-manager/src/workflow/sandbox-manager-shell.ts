import type { CommandOutcome, RecordedEvent } from '@berth/contracts';
import { BerthError, ErrorCodes, KeyedLock, type Clock, type Workflow } from '@berth/core';
import type { Logger, SessionJournal } from '@berth/ports';
import {
  foldSessionEvent,
  sandboxManagerWorkflow,
  SESSION_VIEW_EVENT_TYPES,
  type ManagerInput,
  type ManagerOutput,
  type ManagerPolicy,
  type ManagerState,
  type Reply,
  type SessionView,
} from '@berth/sandbox-workflow';
import { activeTraceContext, type TraceContext } from '@berth/telemetry';
import type { BoundSandboxes } from '../sandboxes/bound-sandboxes';
import type { EnvironmentSettingsReader } from '../sandboxes/environment-settings';
import type { SandboxService } from '../sandboxes/sandbox-service';
import type { SessionFiles } from '../session-files/session-files';
import type { TurnExecutions } from '../turns/turn-executions';
import type { CustomToolSockets } from '../custom-tools/custom-tool-sockets';
import type { SendManagerCommand } from './manager-sender';

const VIEW_TYPES = new Set<string>(SESSION_VIEW_EVENT_TYPES);

export type ShellDeps = Readonly<{
  journal: SessionJournal;
  send: SendManagerCommand;
  sandboxes: SandboxService;
  turns: TurnExecutions;
  files: SessionFiles;
  bound: BoundSandboxes;
  settings: EnvironmentSettingsReader;
  clock: Clock;
  log: Logger;
  policy?: ManagerPolicy;
  /** The sandboxes' tools sockets (custom tools); null when this manager serves none. */
  customTools: Pick<CustomToolSockets, 'changed' | 'closeSession' | 'close'> | null;
}>;

/**
 * The shell around the sandbox-manager workflow: one workflow state per session it touched, kept
 * level with the journal (every input first reads the journal past what the view folded — one
 * indexed read of the few event types the view folds; a session's whole journal is read once,
 * the first time this process touches it), and the outputs carried out by the activities
 * (containers, turns, confirmations, leases) whose results come back as inputs.
 *
 * Inputs of one session are serialised; activities run outside the lock. A delivery's handler
 * waits for the short activities it caused (so a crash redelivers it); a turn's delivery also
 * waits for the turn (`turnSettled`).
 */
export class SandboxManagerShell {
  private readonly workflow: Workflow<ManagerInput, ManagerState, ManagerOutput>;
  private readonly states = new Map<string, ManagerState>();
  private readonly locks = new KeyedLock();
  private readonly tasks = new Map<string, Set<Promise<void>>>();
  /** The journal seq each session's view had when this process first read it. */
  private readonly firstSeen = new Map<string, number>();
  /** Activities that failed since the session's last delivery: that delivery is retried. */
  private readonly failures = new Map<string, Error>();
  private readonly timers = new Set<NodeJS.Timeout>();
  /**
   * The trace of each session's latest TurnStarted delivery: its turn may be started from another
   * input (the sandbox acquired for a SandboxRequested delivery), and its span still belongs there.
   */
  private readonly turnTraces = new Map<string, Readonly<{ turnId: string; trace: TraceContext }>>();

  constructor(private readonly deps: ShellDeps) {
    this.workflow = sandboxManagerWorkflow(deps.policy);
  }

  /**
   * One SESSION_EVT delivery: acted on, then its short activities awaited. An earlier manager may
   * have acted on it when it is redelivered, or older than this process's first look at the session
   * (JetStream's redelivery flag is not enough: in the e2e restart test the next manager was
   * sometimes handed the TurnStarted of a turn the killed one was running as a first delivery).
   */
  async deliver(event: RecordedEvent, redelivered: boolean): Promise<void> {
    if (event.type === 'TurnStarted') this.turnTraces.set(event.session_id, { turnId: event.data.turn_id, trace: activeTraceContext() });
    await this.locks.run(event.session_id, async () => {
      const state = await this.caughtUp(event.session_id);
      // The kernel commits before it publishes: a view behind the delivery means the store read lags.
      if (VIEW_TYPES.has(event.type) && state.view.last_seq < event.seq) {
        throw new BerthError(ErrorCodes.UNAVAILABLE, 503, `the journal of ${event.session_id} does not show event ${event.seq} yet`);
      }
      this.failures.delete(event.session_id);
      const maybeActedOn = redelivered || event.seq <= (this.firstSeen.get(event.session_id) ?? Number.POSITIVE_INFINITY);
      this.apply(event.session_id, state, { kind: 'delivered', event, maybe_acted_on: maybeActedOn, now: this.now() });
    });
    // An interrupt, a terminate, a result: custom tool calls waiting on the session look at it again.
    this.deps.customTools?.changed(event.session_id);
    await this.quiet(event.session_id);
    const failure = this.failures.get(event.session_id);
    if (failure !== undefined) {
      this.failures.delete(event.session_id);
      throw failure;
    }
  }

  /** Resolves once nothing of `turnId` runs here any more (its sandbox acquired, its harness exited). */
  async turnSettled(sessionId: string, turnId: string): Promise<void> {
    for (;;) {
      await this.quiet(sessionId);
      const execution = this.deps.turns.get(sessionId);
      if (execution?.turnId !== turnId) return;
      await execution.done;
      if (this.deps.turns.get(sessionId) === execution) return;
    }
  }

  /** The turn-reconciler's reattach: whether this manager now follows the turn. */
  async reattach(sessionId: string, turnId: string, generation: number): Promise<Reply> {
    const outputs = await this.input(sessionId, { kind: 'reattach_requested', turn_id: turnId, generation, now: this.now() });
    return outputs.find((o): o is Reply => o.kind === 'reply') ?? { kind: 'reply', outcome: 'impossible', message: 'no answer' };
  }

  /** The session as this manager knows it (caught up on the journal). */
  view(sessionId: string): Promise<SessionView> {
    return this.locks.run(sessionId, async () => (await this.caughtUp(sessionId)).view);
  }

  /** Resolves when no short activity of the session is in flight (chained ones included). */
  async quiet(sessionId: string): Promise<void> {
    for (let tasks = this.tasks.get(sessionId); tasks !== undefined && tasks.size > 0; tasks = this.tasks.get(sessionId)) await Promise.allSettled([...tasks]);
  }

  /** Resolves when no short activity of any session is in flight. */
  async settled(): Promise<void> {
    while ([...this.tasks.values()].some((t) => t.size > 0)) await Promise.allSettled([...this.tasks.values()].flatMap((t) => [...t]));
  }

  stop(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  private input(sessionId: string, input: ManagerInput): Promise<readonly ManagerOutput[]> {
    return this.locks.run(sessionId, async () => this.apply(sessionId, await this.caughtUp(sessionId), input));
  }

  /** The session's state with its view level with the journal. Runs under the session lock. */
  private async caughtUp(sessionId: string): Promise<ManagerState> {
    const known = this.states.get(sessionId) ?? this.workflow.initialState();
    const tail = await this.deps.journal.readEvents(sessionId, { afterSeq: known.view.last_seq, types: SESSION_VIEW_EVENT_TYPES });
    let state = known;
    for (const event of tail) state = { ...state, view: foldSessionEvent(state.view, event) };
    if (!this.firstSeen.has(sessionId)) this.firstSeen.set(sessionId, state.view.last_seq);
    this.states.set(sessionId, state);
    return state;
  }

  /** Runs one input through the workflow and starts what it asks. Runs under the session lock. */
  private apply(sessionId: string, state: ManagerState, input: ManagerInput): readonly ManagerOutput[] {
    const outputs = this.workflow.decide(input, state);
    const next = this.workflow.evolve(state, input);
    // A deleted session takes no more work: its state goes once nothing of it runs here.
    if (next.view.lifecycle === 'deleted' && next.work.running === null && next.work.acquiring === null) {
      this.states.delete(sessionId);
      this.turnTraces.delete(sessionId);
    } else this.states.set(sessionId, next);
    for (const output of outputs) this.perform(sessionId, output);
    return outputs;
  }

  private perform(sessionId: string, o: ManagerOutput): void {
    const { sandboxes, turns, bound, log } = this.deps;
    switch (o.kind) {
      case 'command':
        return this.track(sessionId, `${o.command.type}`, async () => {
          let outcome: CommandOutcome;
          try {
            outcome = await this.deps.send(o.command);
          } catch (error) {
            if (o.report) await this.input(sessionId, { kind: 'command_failed', command_id: o.command.command_id, command_type: o.command.type, now: this.now() });
            throw error;
          }
          if (!o.report) return;
          const ok = outcome.ok;
          await this.input(sessionId, {
            kind: 'command_answered',
            command_id: o.command.command_id,
            command_type: o.command.type,
            ok,
            duplicate: ok && outcome.duplicate,
            event_types: ok ? outcome.events.map((e) => e.type as RecordedEvent['type']) : [],
            sandbox_id: o.command.type === 'BindSandbox' ? o.command.data.sandbox_id : null,
            generation: o.command.type === 'BindSandbox' ? o.command.data.generation : null,
            now: this.now(),
          });
        });
      case 'acquire_sandbox':
        return this.track(sessionId, 'acquire', async () => {
          const result = await sandboxes.acquire(o);
          await this.input(sessionId, result);
        });
      case 'release_sandboxes':
        if (!o.whole_session) log.info('a sandbox the kernel did not bind is released', { session_id: sessionId, sandbox_ids: o.sandbox_ids });
        return this.track(sessionId, 'release', async () => {
          const customTools = this.deps.customTools;
          if (customTools !== null) await (o.whole_session ? customTools.closeSession(o.session_id) : Promise.all(o.sandbox_ids.map((id) => customTools.close(id))));
          await sandboxes.releaseAll(o);
        });
      case 'mount_resources':
        // Best effort: the next turn mounts what is still missing, and fails on it if it cannot.
        return this.track(sessionId, 'mount', () =>
          this.deps.files
            .mount({ ownerId: o.owner_id, sessionId: o.session_id, sandboxId: o.sandbox_id }, o.resources)
            .catch((e: unknown) => log.warn('resource not mounted; the next turn tries again', { session_id: sessionId, sandbox_id: o.sandbox_id, err: e })),
        );
      case 'run_turn': {
        const traced = this.turnTraces.get(sessionId);
        const trace = traced?.turnId === o.turn.turn_id ? traced.trace : undefined;
        turns.start(o.turn, (result) => this.input(sessionId, result).then(() => undefined), trace);
        return;
      }
      case 'interrupt_harness':
        return this.track(sessionId, 'interrupt', () => turns.interrupt(o));
      case 'abandon_turn':
        return turns.abandon(o.session_id, o.turn_id);
      case 'answer_confirmation':
        return this.track(sessionId, 'answer', () => turns.answer(o));
      case 'custom_tool_answered':
        return this.deps.customTools?.changed(o.session_id);
      case 'schedule': {
        const timer = setTimeout(() => {
          this.timers.delete(timer);
          void this.input(sessionId, o.input).catch((e: unknown) => log.warn(`${o.input.kind} not handled`, { session_id: sessionId, err: e }));
        }, Math.max(0, Date.parse(o.at) - this.deps.clock.now().getTime()));
        timer.unref();
        this.timers.add(timer);
        return;
      }
      case 'lease':
        if (o.action === 'touch') return bound.touch(o.session_id);
        if (o.action === 'forget') {
          if (o.sandbox_id === null) return bound.forgetSession(o.session_id);
          bound.forget(o.sandbox_id);
          return sandboxes.lost(o.sandbox_id);
        }
        return this.track(sessionId, 'lease', async () => {
          const idle = (await this.deps.settings.read(o.owner_id, o.environment_id)).sandbox.idle;
          bound.track({ sessionId: o.session_id, generation: o.generation, sandboxId: o.sandbox_id, idle, startedAt: this.deps.clock.now() });
          log.info('sandbox bound: its lease is swept here', { session_id: o.session_id, sandbox_id: o.sandbox_id, generation: o.generation });
        });
      case 'reply':
        return;
    }
  }

  /** Runs a short activity outside the lock; a failure is logged and fails the session's pending delivery (it is redelivered). */
  private track(sessionId: string, what: string, task: () => Promise<void>): void {
    let tasks = this.tasks.get(sessionId);
    if (tasks === undefined) this.tasks.set(sessionId, (tasks = new Set()));
    const running: Promise<void> = Promise.resolve()
      .then(task)
      .catch((error: unknown) => {
        this.deps.log.warn(`${what} failed`, { session_id: sessionId, err: error });
        this.failures.set(sessionId, error instanceof Error ? error : new Error(String(error)));
      })
      .finally(() => {
        tasks.delete(running);
        if (tasks.size === 0 && this.tasks.get(sessionId) === tasks) this.tasks.delete(sessionId);
      });
    tasks.add(running);
  }


  private now(): string {
    return this.deps.clock.now().toISOString();
  }
}
