import type { EventType, RecordedEvent, SandboxLeaseTerms, TurnCheckpoint } from '@berth/contracts';

/** A journal event folded into the session's view (catching up on the journal); decides nothing. */
export type EventFolded = Readonly<{ kind: 'event'; event: RecordedEvent }>;

/**
 * A SESSION_EVT delivery, after the view caught up on the journal past it: the sandbox-manager
 * acts on it. `maybe_acted_on`: an earlier manager process may already have acted on it (it was
 * redelivered, or it is older than this process's first look at the session), so a turn's harness
 * may already run: look for it before starting one.
 */
export type EventDelivered = Readonly<{ kind: 'delivered'; event: RecordedEvent; maybe_acted_on: boolean; now: string }>;

/** The turn-reconciler asks this manager to follow a turn whose harness an earlier process started. */
export type ReattachRequested = Readonly<{ kind: 'reattach_requested'; turn_id: string; generation: number; now: string }>;

/** A container runs under the session's name for `generation` (claimed warm, started cold, or found). */
export type SandboxAcquired = Readonly<{
  kind: 'sandbox_acquired';
  generation: number;
  sandbox_id: string;
  warm: boolean;
  expires_at: string | null;
  lease: SandboxLeaseTerms;
  /** The host it runs on, when the manager places sandboxes on several. */
  host?: string;
  now: string;
}>;

export type SandboxAcquireFailed = Readonly<{ kind: 'sandbox_acquire_failed'; generation: number; message: string; now: string }>;

/** The kernel's answer to a command sent with `report: true`. */
export type CommandAnswered = Readonly<{
  kind: 'command_answered';
  command_id: string;
  command_type: string;
  ok: boolean;
  /** The kernel had already processed this command id. */
  duplicate: boolean;
  event_types: readonly EventType[];
  /** BindSandbox: the container it named. */
  sandbox_id: string | null;
  generation: number | null;
  now: string;
}>;

/** A command sent with `report: true` could not be delivered (the broker or the kernel stayed away). */
export type CommandFailed = Readonly<{ kind: 'command_failed'; command_id: string; command_type: string; now: string }>;

/** The harness printed its turn's terminal line (its outputs are recorded and its transcript mirrored). */
export type TurnTerminalSeen = Readonly<{
  kind: 'turn_terminal';
  turn_id: string;
  generation: number;
  ok: boolean;
  interrupted: boolean;
  error: string | null;
  harness_session_id: string | null;
  /** The transcript cut and workspace snapshot taken at the terminal line (absent: none could be taken). */
  checkpoint?: TurnCheckpoint;
  now: string;
}>;

/** What the container looked like once a harness stopped without its terminal line. */
export type SandboxAfterExit =
  | Readonly<{ state: 'running' }>
  | Readonly<{ state: 'dead'; sandbox_id: string; generation: number; cause: 'die' | 'oom' | 'destroy'; exit_code: number | null }>;

/** The harness process is gone (its stream ended) and the turn's last transcript mirror is done. */
export type TurnExited = Readonly<{
  kind: 'turn_exited';
  turn_id: string;
  generation: number;
  exit_code: number | null;
  /** The last lines of stderr, secrets masked. */
  stderr: string;
  sandbox: SandboxAfterExit;
  harness_session_id: string | null;
  now: string;
}>;

/** The harness could not be started (no model configured, no key, a resource that cannot be mounted, a plan the adapter refused, exec failed). */
/** Why the manager could not start a turn's harness (the kernel records it as the turn's failure reason). */
export type TurnNotRunReason = 'model_error' | 'harness_failed' | 'resource_unavailable' | 'workspace_full';
export type TurnNotRun = Readonly<{ kind: 'turn_not_run'; turn_id: string; reason: TurnNotRunReason; message: string; now: string }>;

/** An interrupted turn's deadline passed: it settles whatever the harness does. */
export type InterruptDeadline = Readonly<{ kind: 'interrupt_deadline'; turn_id: string; now: string }>;

export type ManagerInput =
  | EventFolded
  | EventDelivered
  | ReattachRequested
  | SandboxAcquired
  | SandboxAcquireFailed
  | CommandAnswered
  | CommandFailed
  | TurnTerminalSeen
  | TurnExited
  | TurnNotRun
  | InterruptDeadline;
