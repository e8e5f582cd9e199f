import type { Continuation } from './continuation';
import type { EventData, HarnessKind, PermissionMode, SessionResource } from '@berth/contracts';
import type { ManagerInput } from './inputs';
import type { ManagerCommand } from './manager-commands';

/** Send a fact to the kernel (retried with the same id until it answers). `report`: feed the answer back. */
export type SendCommand = Readonly<{ kind: 'command'; command: ManagerCommand; report: boolean }>;

/**
 * Give the session a running container for `generation`: the one already under its name, a warm one,
 * or a cold start, with the session's workspace mounted and its `resources` put in place before it
 * is bound (one that cannot be is reported as a session error; the next turn fails on it).
 */
export type AcquireSandbox = Readonly<{
  kind: 'acquire_sandbox';
  session_id: string;
  generation: number;
  owner_id: string;
  environment_id: string;
  resources: readonly SessionResource[];
  /** A fork's first workspace is the snapshot of this session's turn (null: no fork). */
  fork_of: Readonly<{ session_id: string; turn_id: string }> | null;
  /** An import's workspace blob, put into the sandbox's `/workspace` before it is bound (null: no import, or restored already). */
  import_workspace: string | null;
}>;

/**
 * Stop and remove these containers (and, with `whole_session`, every other container labelled with
 * the session); with `remove_workspace` (the session was deleted), then the session's workspace.
 */
export type ReleaseSandboxes = Readonly<{
  kind: 'release_sandboxes';
  session_id: string;
  sandbox_ids: readonly string[];
  whole_session: boolean;
  remove_workspace: boolean;
}>;

/** Put the session's resources the sandbox lacks in place now (a resource added while no turn runs here); a failure is left to the next turn. */
export type MountResources = Readonly<{ kind: 'mount_resources'; session_id: string; owner_id: string; sandbox_id: string; resources: readonly SessionResource[] }>;

/** Everything a turn runs with, read from the view; the environment's model settings are read by the activity. */
export type TurnToRun = Readonly<{
  session_id: string;
  turn_id: string;
  generation: number;
  sandbox_id: string;
  owner_id: string;
  environment_id: string;
  agent: Readonly<{ id: string; version: number }>;
  harness: HarnessKind;
  permission_mode: PermissionMode;
  prompt: string;
  /** Mounted where the sandbox lacks them before the harness starts; one that cannot be fails the turn (`resource_unavailable`). */
  resources: readonly SessionResource[];
  /** The session's vaults (the harness gets its `environment_variable` credentials' placeholders). */
  vault_ids: readonly string[];
  /** The harness conversation to continue; null on the first turn. */
  resume_id: string | null;
  /** An earlier process may have started this turn's harness: look for it (and reattach) before starting one. */
  may_have_started: boolean;
  /** The turn goes on in a new harness after a pause released the one that asked (`prompt` then tells it the answers). */
  continuation: Continuation | null;
}>;

/**
 * Run (or reattach to) the turn's harness; its progress comes back as `turn_terminal`, `turn_exited`
 * or `turn_not_run`. The session's outputs are captured into files before `turn_terminal` or
 * `turn_exited` is reported, so a client that sees the turn's outcome finds them listed.
 */
export type RunTurn = Readonly<{ kind: 'run_turn'; turn: TurnToRun }>;

/**
 * Stop the turn's harness: its interrupt line when this process streams it (then its process group
 * after a grace), or its process group at once when an earlier process started it.
 */
export type InterruptHarness = Readonly<{ kind: 'interrupt_harness'; session_id: string; turn_id: string; sandbox_id: string; streamed_here: boolean }>;

/** Stop following the turn's output (it settled without the harness's help). */
export type AbandonTurn = Readonly<{ kind: 'abandon_turn'; session_id: string; turn_id: string }>;

/** Answer the harness's pending permission request, durably (the answer outlives this process). */
export type AnswerConfirmation = Readonly<{
  kind: 'answer_confirmation';
  session_id: string;
  turn_id: string;
  sandbox_id: string;
  harness: HarnessKind;
  permission_mode: PermissionMode;
  harness_tool_use_id: string;
  result: EventData<'ToolUseConfirmed'>['result'];
  deny_message: string | null;
}>;

/**
 * The client answered a custom tool call of the turn: the sandbox's tools socket hands the result
 * to the in-sandbox server that waits for it (it reads it from the view, so nothing is carried here).
 */
export type CustomToolAnswered = Readonly<{ kind: 'custom_tool_answered'; session_id: string; turn_id: string; sandbox_id: string }>;

/** Feed `input` back at `at` (the only way time passes for the workflow). */
export type Schedule = Readonly<{ kind: 'schedule'; at: string; input: ManagerInput }>;

/** The lease sweep's view of the sandboxes this process bound: track one, note activity on it, or forget it. */
export type LeaseChange =
  | Readonly<{ kind: 'lease'; action: 'track'; session_id: string; sandbox_id: string; generation: number; owner_id: string; environment_id: string }>
  | Readonly<{ kind: 'lease'; action: 'touch'; session_id: string }>
  | Readonly<{ kind: 'lease'; action: 'forget'; session_id: string; sandbox_id: string | null }>;

/** The answer to a request input (the reconciler's reattach). */
export type Reply = Readonly<{ kind: 'reply'; outcome: 'done' | 'impossible'; message: string }>;

export type ManagerOutput =
  | SendCommand
  | AcquireSandbox
  | ReleaseSandboxes
  | MountResources
  | RunTurn
  | InterruptHarness
  | AbandonTurn
  | AnswerConfirmation
  | CustomToolAnswered
  | Schedule
  | LeaseChange
  | Reply;
