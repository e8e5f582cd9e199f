import { berthErrorFrom, NotFoundError, type Clock, type IdGenerator } from '@berth/core';
import type { CommandData, CommandOutcome, CommandType, ContentBlock, SandboxProbe, SessionCommand, SessionCommandOf } from '@berth/contracts';
import {
  boundLeaseExpired,
  decide,
  DEFAULT_REBUILD_WAIT,
  deriveSessionView,
  nextRebuildWaitStep,
  turnNeedsRecovery,
  type RebuildWaitPolicy,
  type RecoveryOutcome,
  type SessionState,
  type SessionView,
} from '@berth/session-domain';
import type { LoadedSession, SessionKernel } from '../kernel';
import type { BackgroundTasks, SandboxProber, SandboxStartup, TurnReconcilePass } from './ports';
import { sessionIdForIdempotencyKey } from './session-ids';

export type SessionLifecycleDeps = Readonly<{
  kernel: Pick<SessionKernel, 'execute' | 'load'>;
  clock: Clock;
  ids: IdGenerator;
  prober: SandboxProber;
  reconciler: TurnReconcilePass;
  startup: SandboxStartup;
  background: BackgroundTasks;
  sleep?: (ms: number) => Promise<void>;
  rebuildWait?: RebuildWaitPolicy;
}>;

export type CreateSessionInput = Readonly<
  Pick<CommandData<'CreateSession'>, 'owner_id' | 'agent' | 'environment_id' | 'harness'> &
    Partial<Pick<CommandData<'CreateSession'>, 'title' | 'metadata' | 'idempotency_key' | 'permission_mode'>>
>;

export type SessionAnswer = Readonly<{ session_id: string; view: SessionView }>;
export type RecoverAnswer = SessionAnswer & Readonly<{ outcome: RecoveryOutcome; reason: string | null }>;
export type RebuildWaitAnswer = SessionAnswer & Readonly<{ because: 'ready' | 'terminal' | 'budget_exhausted' }>;

/** A probe for a session with no bound sandbox: there is nothing to reattach to. */
const NOTHING_BOUND: SandboxProbe = { exists: false, running: false, expiry_known: true, expired: false };

/**
 * The kernel's entry-point flows (what AstraBox's kernel service methods did), over ports: each
 * loads the owner's session, refuses before sending anything when the rules forbid the command,
 * sends one command through the kernel, and runs the follow-ups the outcome calls for (the
 * reconcile pass, the sandbox start in the background).
 */
export function createSessionLifecycle(deps: SessionLifecycleDeps) {
  const { kernel, clock, ids } = deps;
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const rebuildWait = deps.rebuildWait ?? DEFAULT_REBUILD_WAIT;

  function command<T extends CommandType>(type: T, sessionId: string, actor: string, data: CommandData<T>): SessionCommandOf<T> {
    const meta = { command_id: ids.next('cmd'), session_id: sessionId, actor, issued_at: clock.now().toISOString() };
    return { type, data, meta } as unknown as SessionCommandOf<T>;
  }

  /** Another owner's session is indistinguishable from a missing one. */
  async function owned(ownerId: string, sessionId: string): Promise<LoadedSession> {
    const loaded = await kernel.load(sessionId);
    if (!loaded.state.exists || loaded.state.owner_id !== ownerId) throw new NotFoundError(`session ${sessionId} not found`);
    return loaded;
  }

  /** The kernel's own rules, checked first so a refused command is never sent (the events are discarded). */
  function refuseEarly(cmd: SessionCommand, state: SessionState): void {
    decide(cmd, state);
  }

  async function send(cmd: SessionCommand): Promise<Extract<CommandOutcome, { ok: true }>> {
    const outcome = await kernel.execute(cmd);
    if (!outcome.ok) throw berthErrorFrom(outcome.error);
    return outcome;
  }

  async function answer(sessionId: string): Promise<SessionAnswer> {
    const { state } = await kernel.load(sessionId);
    return { session_id: sessionId, view: deriveSessionView(state) };
  }

  function startInBackground(name: string, sessionId: string, state: SessionState, commandId: string): void {
    const request = state.sandbox_request;
    if (request === null) return;
    deps.background.spawn(`${name}-${sessionId}`, () =>
      deps.startup.start({ session_id: sessionId, generation: request.generation, reason: request.reason, command_id: commandId }),
    );
  }

  /**
   * Create, idempotent on (owner, idempotency key): a retry with the same agent returns the session
   * already made and sends nothing; another agent is IDEMPOTENCY_KEY_CONFLICT. The first sandbox
   * starts in the background; the answer does not wait for it.
   */
  async function createSession(input: CreateSessionInput): Promise<SessionAnswer & { created: boolean }> {
    const key = input.idempotency_key ?? null;
    const sessionId = key === null ? ids.next('sesn') : sessionIdForIdempotencyKey(input.owner_id, key);
    const cmd = command('CreateSession', sessionId, input.owner_id, {
      owner_id: input.owner_id,
      agent: input.agent,
      environment_id: input.environment_id,
      harness: input.harness,
      title: input.title ?? null,
      metadata: input.metadata ?? {},
      idempotency_key: key,
      permission_mode: input.permission_mode ?? 'always_allow',
    });
    if (key !== null) {
      const existing = await kernel.load(sessionId);
      if (existing.state.exists) {
        // Another owner or agent behind this key is refused here; the same one is a retry: nothing to send.
        refuseEarly(cmd, existing.state);
        return { ...(await answer(sessionId)), created: false };
      }
    }
    const outcome = await send(cmd);
    const created = outcome.events.some((e) => e.type === 'SessionCreated');
    const { state } = await kernel.load(sessionId);
    if (created) startInBackground('create-startup-worker', sessionId, state, cmd.meta.command_id);
    return { session_id: sessionId, view: deriveSessionView(state), created };
  }

  /**
   * Explicit recover: probe the bound sandbox, let the kernel decide reattach / recreate / manual;
   * after a reattach or a recreate, a turn still waiting for its transcript gets one reconcile pass
   * (a manual outcome changed nothing to reconcile against); a requested sandbox starts in the
   * background. TERMINATED sessions are accepted (they come back READY); DELETED are refused.
   */
  async function recoverSession(ownerId: string, sessionId: string): Promise<RecoverAnswer> {
    const before = await owned(ownerId, sessionId);
    const binding = before.state.sandbox;
    const probe = binding === null ? NOTHING_BOUND : await deps.prober.probe({ session_id: sessionId, sandbox: binding });
    const cmd = command('RecoverSession', sessionId, ownerId, { probe });
    refuseEarly(cmd, before.state);
    const outcome = await send(cmd);
    const { state } = await kernel.load(sessionId);
    const result = state.last_recovery ?? 'reattached';
    if (result !== 'manual-recovery-required' && turnNeedsRecovery(state)) {
      await deps.reconciler.reconcile({ session_id: sessionId, state });
    }
    if (outcome.events.some((e) => e.type === 'SandboxRequested')) startInBackground('recover-startup-worker', sessionId, state, cmd.meta.command_id);
    const after = await answer(sessionId);
    return { ...after, outcome: result, reason: state.recovery_reason };
  }

  /** Sends a lifecycle command after the early refusal check; the flows below only differ in their answers. */
  async function lifecycle<T extends 'TerminateSession' | 'EndConversation' | 'ArchiveSession' | 'DeleteSession'>(
    type: T,
    ownerId: string,
    sessionId: string,
  ): Promise<{ before: SessionState; outcome: Extract<CommandOutcome, { ok: true }> }> {
    const { state } = await owned(ownerId, sessionId);
    const cmd = command(type, sessionId, ownerId, {} as CommandData<T>);
    refuseEarly(cmd, state);
    return { before: state, outcome: await send(cmd) };
  }

  /** Releases the sandbox. A TERMINATED session is accepted: the answer is the same every time. */
  async function terminateSession(ownerId: string, sessionId: string): Promise<{ session_id: string; status: 'terminated'; released_sandbox_id?: string }> {
    const { before, outcome } = await lifecycle('TerminateSession', ownerId, sessionId);
    const released = outcome.events.some((e) => e.type === 'SessionTerminated') ? before.sandbox?.sandbox_id : undefined;
    return released === undefined ? { session_id: sessionId, status: 'terminated' } : { session_id: sessionId, status: 'terminated', released_sandbox_id: released };
  }

  async function endConversation(ownerId: string, sessionId: string): Promise<{ session_id: string; status: 'conversation-ended' }> {
    await lifecycle('EndConversation', ownerId, sessionId);
    return { session_id: sessionId, status: 'conversation-ended' };
  }

  async function archiveSession(ownerId: string, sessionId: string): Promise<{ session_id: string; archived: true }> {
    await lifecycle('ArchiveSession', ownerId, sessionId);
    return { session_id: sessionId, archived: true };
  }

  /** Delete accepts any state; a second delete answers the same. */
  async function deleteSession(ownerId: string, sessionId: string): Promise<{ session_id: string; deleted: true }> {
    await lifecycle('DeleteSession', ownerId, sessionId);
    return { session_id: sessionId, deleted: true };
  }

  async function setPermissionMode(ownerId: string, sessionId: string, mode: CommandData<'SetPermissionMode'>['mode']): Promise<SessionAnswer> {
    const { state } = await owned(ownerId, sessionId);
    const cmd = command('SetPermissionMode', sessionId, ownerId, { mode });
    refuseEarly(cmd, state);
    await send(cmd);
    return answer(sessionId);
  }

  /**
   * A user message. A bound sandbox whose lease is past is recovered first (expiry alone is not
   * proof of death: the recover probes it), so the message never goes to a sandbox that is gone.
   */
  async function submitUserMessage(ownerId: string, sessionId: string, message: Readonly<{ turn_id: string; content: readonly ContentBlock[] }>): Promise<SessionAnswer> {
    const { state } = await owned(ownerId, sessionId);
    if (boundLeaseExpired(state.sandbox, clock.now()) && !state.runtime_unavailable) await recoverSession(ownerId, sessionId);
    const cmd = command('SubmitUserMessage', sessionId, ownerId, { turn_id: message.turn_id, content: [...message.content] });
    await send(cmd);
    return answer(sessionId);
  }

  /** Reads never write: a TERMINATED session reads as terminated until a recover brings it back. */
  async function getSession(ownerId: string, sessionId: string): Promise<SessionAnswer> {
    const { state } = await owned(ownerId, sessionId);
    return { session_id: sessionId, view: deriveSessionView(state) };
  }

  /**
   * Waits, bounded by the injected clock, until a rebuilding session has a dispatchable sandbox.
   * A terminal session returns at once (the turn guard reports it); past the budget the last state
   * seen is returned without another sleep or read.
   */
  async function awaitRuntimeRebuild(ownerId: string, sessionId: string): Promise<RebuildWaitAnswer> {
    const startedAt = clock.now();
    let { state } = await owned(ownerId, sessionId);
    for (;;) {
      const step = nextRebuildWaitStep(state, startedAt, clock.now(), rebuildWait);
      if (step.kind === 'stop') return { session_id: sessionId, view: deriveSessionView(state), because: step.because };
      await sleep(step.delayMs);
      ({ state } = await owned(ownerId, sessionId));
    }
  }

  return {
    createSession,
    recoverSession,
    terminateSession,
    endConversation,
    archiveSession,
    deleteSession,
    setPermissionMode,
    submitUserMessage,
    getSession,
    awaitRuntimeRebuild,
  };
}

export type SessionLifecycle = ReturnType<typeof createSessionLifecycle>;
