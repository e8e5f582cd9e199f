import type { SandboxProbe } from '@berth/contracts';
import type { SandboxBinding, SessionState } from '@berth/session-domain';

/** Gathers the facts about a bound sandbox that RecoverSession decides on (a sandbox-manager query). */
export interface SandboxProber {
  probe(request: Readonly<{ session_id: string; sandbox: SandboxBinding }>): Promise<SandboxProbe>;
}

/**
 * One pass of the turn reconciler's ladder for a session whose current turn needs its transcript
 * recovered. It reports what it finds as commands (RecoverTurn / FailTurn), never by writing state.
 */
export interface TurnReconcilePass {
  reconcile(request: Readonly<{ session_id: string; state: SessionState }>): Promise<void>;
}

/**
 * Hands a sandbox request to the sandbox-manager at once (e.g. a NATS request) rather than waiting
 * for the outbox relay to publish `SandboxRequested`. The manager starts one sandbox per
 * generation, so the event arriving afterwards changes nothing.
 */
export interface SandboxStartup {
  start(request: Readonly<{ session_id: string; generation: number; reason: 'startup' | 'rebuild' | 'recover'; command_id: string }>): Promise<void>;
}

/** Runs work after the caller has its answer. The spawner owns the task's errors (it logs them). */
export interface BackgroundTasks {
  spawn(name: string, task: () => Promise<void>): void;
}
