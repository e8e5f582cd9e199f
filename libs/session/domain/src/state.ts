import type { ContentBlock, EventData, ForkOrigin, HarnessKind, ImportOrigin, PermissionMode, SandboxLeaseTerms, SessionResource, TurnCheckpoint, TurnFailureReason, Usage } from '@berth/contracts';

/** Where the session is in its life. Sandbox death is NOT a lifecycle state: see `runtime_unavailable`. */
export type Lifecycle = 'CREATING' | 'READY' | 'RECOVERY_REQUIRED' | 'TERMINATED' | 'DELETED';

/** What the conversation is doing right now. */
export type ConversationState = 'IDLE' | 'RUNNING' | 'WAITING_INPUT' | 'INTERRUPTING';

export type TurnStatus = 'RUNNING' | 'AWAITING_CONFIRMATION' | 'INTERRUPTING';

/** Set when the turn's harness stopped without a terminal: the reconciler must recover its transcript. */
export type TurnRecoveryPhase = 'TRANSCRIPT_PENDING';

/** NOT_RECEIVED until the harness produced its first output for the turn. */
export type DeliveryState = 'NOT_RECEIVED' | 'RECEIVED';

export type CurrentTurn = Readonly<{
  id: string;
  status: TurnStatus;
  recovery_phase: TurnRecoveryPhase | null;
  delivery: DeliveryState;
  /** Highest harness output offset already recorded; -1 before any output. */
  last_offset: number;
  /**
   * Event ids the turn waits on: tool uses for `user.tool_confirmation` and custom tool uses for
   * `user.custom_tool_result` (`custom_tool_uses` says which are which).
   */
  pending_confirmations: readonly string[];
  confirmed: readonly string[];
  /** `agent.custom_tool_use` event ids of this turn, answered or not. */
  custom_tool_uses: readonly string[];
  /** Harness tool-use id (e.g. `toolu_…`) → public event id of its `agent.tool_use`. */
  tool_use_event_ids: Readonly<Record<string, string>>;
  /** It waited for confirmations when the session paused: its harness process is gone; the answer continues it in a new one (`TurnResumed` clears it). */
  harness_released: boolean;
}>;

export type LastTurn = Readonly<{ id: string; status: 'COMPLETED' | 'FAILED'; failure_reason: TurnFailureReason | null; interrupted: boolean }>;

/** A turn's `user.message` as the journal recorded it (a fork names its turn by either). */
export type TurnMessage = Readonly<{ event_id: string; seq: number }>;

/**
 * A settled turn a fork may continue from: its message, how it ended, the harness conversation at
 * its end, and its checkpoint (null when none was recorded: a recovered turn, or one before checkpoints).
 */
export type ForkPoint = Readonly<{
  turn_id: string;
  message: TurnMessage | null;
  status: 'COMPLETED' | 'FAILED';
  harness_session_id: string | null;
  checkpoint: Readonly<{ transcript: TurnCheckpoint['transcript']; workspace: TurnCheckpoint['workspace']; workspace_unsupported?: true }> | null;
}>;

export type QueuedMessage = Readonly<{ turn_id: string; content: readonly ContentBlock[] }>;

/** `lease`: how `expires_at` moves with turn activity; null for a binding with a fixed expiry. */
export type SandboxBinding = Readonly<{ sandbox_id: string; generation: number; expires_at: string | null; lease: SandboxLeaseTerms | null }>;

export type SandboxRequest = Readonly<{ generation: number; reason: 'startup' | 'rebuild' | 'recover' }>;

export type RecoveryPolicy = 'auto' | 'manual';

export type RecoveryOutcome = EventData<'SessionRecovered'>['outcome'];

export type SessionState = Readonly<{
  exists: boolean;
  owner_id: string;
  agent: Readonly<{ id: string; version: number }>;
  environment_id: string;
  harness: HarnessKind;
  title: string | null;
  metadata: Readonly<Record<string, string>>;
  idempotency_key: string | null;
  lifecycle: Lifecycle;
  archived: boolean;
  archived_at: string | null;
  /** Paused on request: no sandbox, everything else kept; the next message or a resume brings one back. */
  paused: boolean;
  /** A pause asked for while a turn ran: it happens when that turn ends or waits for a confirmation. */
  pause_requested: boolean;
  conversation: ConversationState;
  current_turn: CurrentTurn | null;
  last_turn: LastTurn | null;
  queued: readonly QueuedMessage[];
  /** The live sandbox, or null when none is bound. */
  sandbox: SandboxBinding | null;
  /** The sandbox is gone; the next message (or a recover) rebuilds it. The session stays READY. */
  runtime_unavailable: boolean;
  /** A sandbox start the kernel asked for and nobody has bound yet. */
  sandbox_request: SandboxRequest | null;
  /** Highest generation ever requested; the next request uses this + 1. */
  last_generation: number;
  recovery_policy: RecoveryPolicy;
  /** Why recovery needs a human, persisted by the recover pass (only meaningful in RECOVERY_REQUIRED). */
  recovery_reason: string | null;
  last_recovery: RecoveryOutcome | null;
  permission_mode: PermissionMode;
  /** The harness's own session id, used to resume the conversation in a new sandbox. */
  harness_session_id: string | null;
  conversation_ended: boolean;
  /** The `user.message` of every turn not settled yet (the current one and the queued ones). */
  turn_messages: Readonly<Record<string, TurnMessage>>;
  /** The latest settled turns, oldest first (at most FORK_POINT_HISTORY). */
  fork_points: readonly ForkPoint[];
  /** Set when this session is a fork of another. */
  forked_from: ForkOrigin | null;
  /** Set when this session was imported from an archive. */
  imported_from: ImportOrigin | null;
  /** Files and repositories mounted into every sandbox of the session, in the order they were added. */
  resources: readonly SessionResource[];
  /** Vaults whose credentials the egress injects into this session's requests, pinned at create. */
  vault_ids: readonly string[];
  usage: Usage;
  created_at: string | null;
  updated_at: string | null;
}>;

export const ZERO_USAGE: Usage = { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };

export const initialState = (): SessionState => ({
  exists: false,
  owner_id: '',
  agent: { id: '', version: 0 },
  environment_id: '',
  harness: 'claude-code',
  title: null,
  metadata: {},
  idempotency_key: null,
  lifecycle: 'CREATING',
  archived: false,
  archived_at: null,
  paused: false,
  pause_requested: false,
  conversation: 'IDLE',
  current_turn: null,
  last_turn: null,
  queued: [],
  sandbox: null,
  runtime_unavailable: false,
  sandbox_request: null,
  last_generation: 0,
  recovery_policy: 'auto',
  recovery_reason: null,
  last_recovery: null,
  permission_mode: 'always_allow',
  harness_session_id: null,
  conversation_ended: false,
  turn_messages: {},
  fork_points: [],
  forked_from: null,
  imported_from: null,
  resources: [],
  vault_ids: [],
  usage: ZERO_USAGE,
  created_at: null,
  updated_at: null,
});

/** The current turn lost its harness mid-flight and its transcript must be recovered. */
export const turnNeedsRecovery = (state: SessionState): boolean => state.current_turn?.recovery_phase === 'TRANSCRIPT_PENDING';
