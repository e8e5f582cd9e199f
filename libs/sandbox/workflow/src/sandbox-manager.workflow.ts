import type { RecordedEvent, TurnCheckpoint } from '@berth/contracts';
import type { Workflow } from '@berth/core';
import type { CommandAnswered, EventDelivered, ManagerInput, TurnExited, TurnNotRunReason, TurnTerminalSeen } from './inputs';
import { managerCommands, type ManagerCommand } from './manager-commands';
import type { ManagerOutput } from './outputs';
import { defaultManagerPolicy, type ManagerPolicy } from './policy';
import { continuationPrompt, type Continuation } from './continuation';
import { carriedDecisions, emptySessionView, foldSessionEvent, promptText, type SessionView } from './session-view';

/** The turn whose harness this process runs (or follows after a reattach), until its process ended. */
export type RunningTurn = Readonly<{
  turn_id: string;
  generation: number;
  sandbox_id: string;
  interrupted: boolean;
  /** Its terminal command was sent: whatever the process does next changes nothing. */
  settled: boolean;
}>;

/** What this process is doing for the session. Not durable: a restarted manager starts with none of it. */
export type ManagerWork = Readonly<{
  /** Generation this process is getting a container for. */
  acquiring: number | null;
  /** A started turn waiting here for that container. */
  waiting: Readonly<{ turn_id: string; maybe_acted_on: boolean }> | null;
  running: RunningTurn | null;
  /** The last turn this process settled as interrupted before its harness ran here: it never starts now. */
  interrupted_unrun: string | null;
}>;

export type ManagerState = Readonly<{ view: SessionView; work: ManagerWork }>;

const idle: ManagerWork = { acquiring: null, waiting: null, running: null, interrupted_unrun: null };

export const initialManagerState = (): ManagerState => ({ view: emptySessionView(), work: idle });

type Step = Readonly<{ state: ManagerState; outputs: readonly ManagerOutput[] }>;
type EventOf<T extends RecordedEvent['type']> = Extract<RecordedEvent, { type: T }>;

/**
 * The sandbox-manager's rules for one session, as a pure workflow: which container to get, when to
 * bind it, which turn to run, how an interrupt, a tool confirmation, a terminate or a finished
 * harness settles, and which facts to report. Its state is the session's view (folded from the
 * journal, `event` inputs) plus what this process is doing (`work`). Decisions are taken on
 * deliveries and on the results of the activities it asked for; time passes only through the
 * inputs it scheduled. `decide` and `evolve` share one `step`.
 *
 * Fences: a delivery for a turn or generation the view no longer has changes nothing; a result
 * for a turn this process no longer runs changes nothing; every fact carries a deterministic id
 * (`managerCommands`), so a repeated decision is one command to the kernel.
 */
export function sandboxManagerWorkflow(policy: ManagerPolicy = defaultManagerPolicy): Workflow<ManagerInput, ManagerState, ManagerOutput> {
  const step = (input: ManagerInput, state: ManagerState): Step => {
    switch (input.kind) {
      case 'event':
        return nothing({ ...state, view: foldSessionEvent(state.view, input.event) });
      case 'delivered':
        return onDelivered(state, input);
      case 'reattach_requested':
        return onReattach(state, input.turn_id, input.generation);
      case 'sandbox_acquired':
        return {
          state,
          outputs: [
            command(
              managerCommands.bindSandbox(state.view.session_id, {
                sandbox_id: input.sandbox_id,
                generation: input.generation,
                expires_at: input.expires_at,
                warm: input.warm,
                lease: input.lease,
                ...(input.host === undefined ? {} : { host: input.host }),
              }),
              true,
            ),
          ],
        };
      case 'sandbox_acquire_failed':
        return {
          state: withWork(state, { acquiring: state.work.acquiring === input.generation ? null : state.work.acquiring, waiting: null }),
          outputs: [command(managerCommands.sandboxStartFailed(state.view.session_id, input.generation, input.message))],
        };
      case 'command_answered':
        return input.command_type === 'BindSandbox' ? onBindAnswered(state, input) : nothing(state);
      case 'command_failed':
        // Whether it was bound is unknown: the request's redelivery acquires again (the same container, the same bind id).
        return input.command_type === 'BindSandbox' ? nothing(withWork(state, { acquiring: null, waiting: null })) : nothing(state);
      case 'turn_terminal':
        return onTerminal(state, input);
      case 'turn_exited':
        return onExited(state, input);
      case 'turn_not_run': {
        const running = state.work.running;
        if (running?.turn_id !== input.turn_id) return nothing(state);
        const next = withWork(state, { running: null });
        return running.settled ? nothing(next) : { state: next, outputs: [fail(state, input.turn_id, input.reason, input.message)] };
      }
      case 'interrupt_deadline': {
        const running = state.work.running;
        if (running?.turn_id !== input.turn_id || running.settled) return nothing(state);
        return {
          state: withWork(state, { running: { ...running, settled: true } }),
          outputs: [complete(state, running.turn_id, running.generation, true), { kind: 'abandon_turn', session_id: state.view.session_id, turn_id: running.turn_id }],
        };
      }
    }
  };

  const nothing = (state: ManagerState): Step => ({ state, outputs: [] });
  const withWork = (state: ManagerState, work: Partial<ManagerWork>): ManagerState => ({ ...state, work: { ...state.work, ...work } });
  const command = (c: ManagerCommand, report = false): ManagerOutput => ({ kind: 'command', command: c, report });
  const complete = (state: ManagerState, turnId: string, generation: number, interrupted: boolean, harnessSessionId: string | null = null, checkpoint?: TurnCheckpoint): ManagerOutput =>
    command(managerCommands.completeTurn(state.view.session_id, { turn_id: turnId, generation, interrupted, harness_session_id: harnessSessionId, ...(checkpoint !== undefined ? { checkpoint } : {}) }));
  const fail = (state: ManagerState, turnId: string, reason: TurnNotRunReason | 'sandbox_lost' | 'input_not_delivered', message: string): ManagerOutput =>
    command(managerCommands.failTurn(state.view.session_id, { turn_id: turnId, reason, message }));
  const touch = (state: ManagerState): ManagerOutput => ({ kind: 'lease', action: 'touch', session_id: state.view.session_id });

  const acquire = (state: ManagerState, generation: number): Step => {
    if (state.work.acquiring === generation) return nothing(state);
    const v = state.view;
    return {
      state: withWork(state, { acquiring: generation }),
      outputs: [{ kind: 'acquire_sandbox', session_id: v.session_id, generation, owner_id: v.owner_id, environment_id: v.environment_id, resources: v.resources, fork_of: v.forked_from, import_workspace: v.import_workspace }],
    };
  };

  /**
   * Runs the view's current turn on its live sandbox. A turn a pause released goes on in a new
   * harness with the answers its paused one asked for, also when a restarted manager follows (or,
   * not yet started, starts) that harness.
   */
  const start = (state: ManagerState, turnId: string, mayHaveStarted: boolean): Step => {
    const v = state.view;
    const sandbox = v.sandbox;
    const content = v.prompts[turnId];
    const continuedAt = v.turn?.turn_id === turnId ? v.turn.continued_at : null;
    const continuation: Continuation | null = v.turn !== null && continuedAt !== null ? { decisions: carriedDecisions(v.turn), resumed_at: continuedAt } : null;
    if (sandbox === null) return { state, outputs: [fail(state, turnId, 'sandbox_lost', 'the session has no sandbox to run the turn in')] };
    if (content === undefined) return { state, outputs: [fail(state, turnId, 'input_not_delivered', 'the turn has no user message in the journal')] };
    return {
      state: withWork(state, { running: { turn_id: turnId, generation: sandbox.generation, sandbox_id: sandbox.sandbox_id, interrupted: false, settled: false }, waiting: null }),
      outputs: [
        touch(state),
        {
          kind: 'run_turn',
          turn: {
            session_id: v.session_id,
            turn_id: turnId,
            generation: sandbox.generation,
            sandbox_id: sandbox.sandbox_id,
            owner_id: v.owner_id,
            environment_id: v.environment_id,
            agent: v.agent,
            harness: v.harness,
            permission_mode: v.permission_mode,
            prompt: continuation === null ? promptText(content) : continuationPrompt(continuation),
            resources: v.resources,
            vault_ids: v.vault_ids,
            resume_id: v.harness_session_id,
            may_have_started: mayHaveStarted,
            continuation,
          },
        },
      ],
    };
  };

  const onDelivered = (state: ManagerState, input: EventDelivered): Step => {
    const event = input.event;
    switch (event.type) {
      case 'SandboxRequested': {
        const v = state.view;
        if (v.sandbox_request !== event.data.generation || v.lifecycle !== 'open') return nothing(state);
        return acquire(state, event.data.generation);
      }
      case 'TurnStarted':
        return onTurnStarted(state, event, input.maybe_acted_on);
      case 'InterruptRequested':
        return onInterrupt(state, event, input.now);
      case 'ToolUseConfirmed':
        return onConfirmed(state, event);
      case 'CustomToolResultReceived':
        return onCustomToolResult(state, event);
      case 'TurnResumed':
        return onTurnResumed(state, event);
      case 'SessionTerminated':
      case 'SessionArchived':
      case 'SessionDeleted':
        return onSessionEnded(state, event);
      case 'SessionPaused':
        return onPaused(state, event);
      case 'SandboxLost':
        return { state, outputs: [{ kind: 'lease', action: 'forget', session_id: state.view.session_id, sandbox_id: event.data.sandbox_id }] };
      case 'SessionResourceAdded':
        return onResourceAdded(state);
      default:
        return nothing(state);
    }
  };

  const onTurnStarted = (state: ManagerState, event: EventOf<'TurnStarted'>, maybeActedOn: boolean): Step => {
    const v = state.view;
    const turnId = event.data.turn_id;
    if (v.turn?.turn_id !== turnId) return nothing(state);
    if (state.work.running?.turn_id === turnId || state.work.interrupted_unrun === turnId) return nothing(state);
    if (v.sandbox === null) {
      if (v.sandbox_request === null) return { state, outputs: [fail(state, turnId, 'sandbox_lost', 'the session has no sandbox to run the turn in')] };
      const acquiring = acquire(state, v.sandbox_request);
      return { state: withWork(acquiring.state, { waiting: { turn_id: turnId, maybe_acted_on: maybeActedOn } }), outputs: acquiring.outputs };
    }
    // An interrupt recorded before the harness ran: nothing to stop, the turn ends at once.
    if (v.turn.interrupting) return { state: withWork(state, { interrupted_unrun: turnId }), outputs: [complete(state, turnId, v.sandbox.generation, true)] };
    return start(state, turnId, maybeActedOn);
  };

  const onBindAnswered = (state: ManagerState, input: CommandAnswered): Step => {
    const generation = input.generation ?? 0;
    const cleared = withWork(state, { acquiring: state.work.acquiring === generation ? null : state.work.acquiring });
    const bound = input.ok && (input.duplicate || input.event_types.includes('SandboxBound'));
    const sandboxId = input.sandbox_id ?? '';
    if (!bound) {
      // The kernel no longer wants this generation (terminated, deleted, superseded): give it back.
      return {
        state: withWork(cleared, { waiting: null }),
        outputs: [{ kind: 'release_sandboxes', session_id: state.view.session_id, sandbox_ids: [sandboxId], whole_session: false, remove_workspace: false }],
      };
    }
    const v = state.view;
    const lease: ManagerOutput = { kind: 'lease', action: 'track', session_id: v.session_id, sandbox_id: sandboxId, generation, owner_id: v.owner_id, environment_id: v.environment_id };
    const waiting = cleared.work.waiting;
    if (waiting === null || v.turn?.turn_id !== waiting.turn_id || v.sandbox?.sandbox_id !== sandboxId) return { state: withWork(cleared, { waiting: null }), outputs: [lease] };
    const started = start(cleared, waiting.turn_id, waiting.maybe_acted_on);
    return { state: started.state, outputs: [lease, ...started.outputs] };
  };

  const onInterrupt = (state: ManagerState, event: EventOf<'InterruptRequested'>, now: string): Step => {
    const running = state.work.running;
    const turnId = event.data.turn_id;
    const v = state.view;
    if (running !== null && !running.settled && (turnId === null || running.turn_id === turnId)) {
      if (running.interrupted) return nothing(state);
      return {
        state: withWork(state, { running: { ...running, interrupted: true } }),
        outputs: [
          { kind: 'interrupt_harness', session_id: v.session_id, turn_id: running.turn_id, sandbox_id: running.sandbox_id, streamed_here: true },
          { kind: 'schedule', at: new Date(Date.parse(now) + policy.interruptDeadlineMs).toISOString(), input: { kind: 'interrupt_deadline', turn_id: running.turn_id, now } },
        ],
      };
    }
    // Not running here: still waiting for this manager's turn slot, or started by an earlier process.
    // Whatever may run in the sandbox is stopped, and the turn ends now, not after the turns ahead of it.
    if (turnId === null || v.turn?.turn_id !== turnId || v.sandbox === null) return nothing(state);
    return {
      state: withWork(state, { interrupted_unrun: turnId }),
      outputs: [
        { kind: 'interrupt_harness', session_id: v.session_id, turn_id: turnId, sandbox_id: v.sandbox.sandbox_id, streamed_here: false },
        complete(state, turnId, v.sandbox.generation, true),
      ],
    };
  };

  const onConfirmed = (state: ManagerState, event: EventOf<'ToolUseConfirmed'>): Step => {
    const v = state.view;
    const turnId = event.data.turn_id;
    const harnessToolUseId = v.turn?.turn_id === turnId ? v.turn.asks[event.data.tool_use_event_id] : undefined;
    if (harnessToolUseId === undefined || v.sandbox === null) return nothing(state);
    // The harness that asked went with the paused sandbox (the answer came before the `TurnResumed` that continued the turn in a new one).
    const ofReleased = v.turn !== null && (v.turn.harness_released || (v.turn.continued_at !== null && event.seq < v.turn.continued_at));
    if (ofReleased && state.work.running?.turn_id !== turnId) return nothing(state);
    const answer: ManagerOutput = {
      kind: 'answer_confirmation',
      session_id: v.session_id,
      turn_id: turnId,
      sandbox_id: v.sandbox.sandbox_id,
      harness: v.harness,
      permission_mode: v.permission_mode,
      harness_tool_use_id: harnessToolUseId,
      result: event.data.result,
      deny_message: event.data.deny_message,
    };
    if (state.work.running?.turn_id === turnId) return { state, outputs: [answer] };
    // The harness waited through a restart of this manager: answer it, then follow the rest of its turn.
    const followed = start(state, turnId, true);
    return { state: followed.state, outputs: [answer, ...followed.outputs] };
  };

  /** Like a confirmation: the waiting harness gets the answer, and a harness that waited through a restart of this manager is followed again. */
  const onCustomToolResult = (state: ManagerState, event: EventOf<'CustomToolResultReceived'>): Step => {
    const v = state.view;
    const turnId = event.data.turn_id;
    if (v.turn?.turn_id !== turnId || v.turn.interrupting || v.sandbox === null) return nothing(state);
    const answered: ManagerOutput = { kind: 'custom_tool_answered', session_id: v.session_id, turn_id: turnId, sandbox_id: v.sandbox.sandbox_id };
    if (state.work.running?.turn_id === turnId) return { state, outputs: [answered] };
    const followed = start(state, turnId, true);
    return { state: followed.state, outputs: [answered, ...followed.outputs] };
  };

  /**
   * The last answer of a turn whose harness a pause released: a new harness continues it on the
   * session's sandbox, or on the one its resume is getting (the answer itself may have resumed it).
   */
  const onTurnResumed = (state: ManagerState, event: EventOf<'TurnResumed'>): Step => {
    const v = state.view;
    const turnId = event.data.turn_id;
    if (v.turn?.turn_id !== turnId || v.turn.continued_at !== event.seq || state.work.running?.turn_id === turnId) return nothing(state);
    if (v.sandbox !== null) return start(state, turnId, false);
    if (v.sandbox_request === null) return { state, outputs: [fail(state, turnId, 'sandbox_lost', 'the session has no sandbox to continue the turn in')] };
    const acquiring = acquire(state, v.sandbox_request);
    return { state: withWork(acquiring.state, { waiting: { turn_id: turnId, maybe_acted_on: false } }), outputs: acquiring.outputs };
  };

  /**
   * Terminate, archive and delete take the session's sandboxes away. A late or redelivered
   * terminate of a session recovered since (the view, caught up past it, is open again) releases
   * only the sandbox it named, never the one bound after it.
   */
  const onSessionEnded = (state: ManagerState, event: EventOf<'SessionTerminated'> | EventOf<'SessionArchived'> | EventOf<'SessionDeleted'>): Step => {
    const v = state.view;
    if (event.type === 'SessionTerminated' && v.lifecycle === 'open') return releaseSuperseded(state, event.data.sandbox_id);
    const running = state.work.running;
    const named = event.type === 'SessionTerminated' && event.data.sandbox_id !== null ? [event.data.sandbox_id] : [];
    return {
      state: withWork(state, { running: null, waiting: null }),
      outputs: [
        ...(running === null ? [] : [{ kind: 'abandon_turn', session_id: v.session_id, turn_id: running.turn_id } as const]),
        { kind: 'lease', action: 'forget', session_id: v.session_id, sandbox_id: null },
        // The workspace outlives terminate and archive (a recover finds the work); only delete removes it, after the containers.
        { kind: 'release_sandboxes', session_id: v.session_id, sandbox_ids: named, whole_session: true, remove_workspace: event.type === 'SessionDeleted' },
      ],
    };
  };

  /** A resource added while the sandbox idles goes in now; with a turn running here, the next turn mounts it; a paused session has no sandbox (its resume's start mounts them). */
  const onResourceAdded = (state: ManagerState): Step => {
    const v = state.view;
    if (v.lifecycle !== 'open' || v.paused || v.sandbox === null || state.work.running !== null) return nothing(state);
    return { state, outputs: [{ kind: 'mount_resources', session_id: v.session_id, owner_id: v.owner_id, sandbox_id: v.sandbox.sandbox_id, resources: v.resources }] };
  };

  /**
   * A pause takes the session's sandboxes away like a terminate (workspace and transcript mirror live
   * outside them). A late or redelivered pause of a session resumed since releases only the sandbox
   * it named, never the one bound after it.
   */
  const onPaused = (state: ManagerState, event: EventOf<'SessionPaused'>): Step => {
    const v = state.view;
    const named = event.data.sandbox_id;
    if (v.paused) {
      return {
        state: withWork(state, { running: null, waiting: null }),
        outputs: [
          { kind: 'lease', action: 'forget', session_id: v.session_id, sandbox_id: null },
          { kind: 'release_sandboxes', session_id: v.session_id, sandbox_ids: named === null ? [] : [named], whole_session: true, remove_workspace: false },
        ],
      };
    }
    return releaseSuperseded(state, named);
  };

  /** A sandbox an old terminate or pause named, unless it is the one bound now. */
  const releaseSuperseded = (state: ManagerState, named: string | null): Step => {
    const v = state.view;
    if (named === null || v.sandbox?.sandbox_id === named) return nothing(state);
    return {
      state,
      outputs: [
        { kind: 'lease', action: 'forget', session_id: v.session_id, sandbox_id: named },
        { kind: 'release_sandboxes', session_id: v.session_id, sandbox_ids: [named], whole_session: false, remove_workspace: false },
      ],
    };
  };

  const onReattach = (state: ManagerState, turnId: string, generation: number): Step => {
    if (state.work.running?.turn_id === turnId) return { state, outputs: [{ kind: 'reply', outcome: 'done', message: 'the turn is already streamed by this manager' }] };
    const v = state.view;
    if (v.turn?.turn_id !== turnId || v.sandbox?.generation !== generation) {
      return { state, outputs: [{ kind: 'reply', outcome: 'impossible', message: 'the turn is not current on this sandbox generation' }] };
    }
    const started = start(state, turnId, true);
    return { state: started.state, outputs: [...started.outputs, { kind: 'reply', outcome: 'done', message: 'reattached' }] };
  };

  const onTerminal = (state: ManagerState, input: TurnTerminalSeen): Step => {
    const running = state.work.running;
    if (running?.turn_id !== input.turn_id || running.generation !== input.generation || running.settled) return nothing(state);
    const settled = withWork(state, { running: { ...running, settled: true } });
    if (running.interrupted || input.interrupted) return { state: settled, outputs: [complete(state, running.turn_id, running.generation, true, input.harness_session_id, input.checkpoint)] };
    if (input.ok) return { state: settled, outputs: [complete(state, running.turn_id, running.generation, false, input.harness_session_id, input.checkpoint)] };
    return { state: settled, outputs: [fail(state, running.turn_id, 'model_error', input.error ?? 'the harness reported a failed turn')] };
  };

  const onExited = (state: ManagerState, input: TurnExited): Step => {
    const running = state.work.running;
    // A harness a pause released may end after its turn went on in a new sandbox: its exit is not the new harness's.
    if (running?.turn_id !== input.turn_id || running.generation !== input.generation) return { state, outputs: [touch(state)] };
    const next = withWork(state, { running: null });
    if (running.settled) return { state: next, outputs: [touch(state)] };
    if (running.interrupted) return { state: next, outputs: [touch(state), complete(state, running.turn_id, running.generation, true, input.harness_session_id)] };
    if (input.sandbox.state === 'dead') {
      // Not a harness failure: its container died. The same fact the death watcher reports (one id),
      // and the kernel hands the turn to sandbox-loss recovery.
      const { sandbox_id, generation, cause, exit_code } = input.sandbox;
      return { state: next, outputs: [command(managerCommands.sandboxDied(state.view.session_id, { sandbox_id, generation, cause, exit_code }))] };
    }
    const code = input.exit_code === null ? '' : ` with code ${input.exit_code}`;
    const stderr = input.stderr === '' ? '' : `: ${input.stderr}`;
    return { state: next, outputs: [touch(state), fail(state, running.turn_id, 'harness_failed', `the harness exited${code} without finishing the turn${stderr}`)] };
  };

  return {
    name: 'sandbox-manager',
    initialState: initialManagerState,
    decide: (input, state) => step(input, state).outputs,
    evolve: (state, input) => step(input, state).state,
  };
}
