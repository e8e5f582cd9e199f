import { z } from 'zod';
import { ContentSchema, HarnessKindSchema, PermissionModeSchema, ToolResultContentSchema, UsageSchema } from './content';
import { EgressDenialSchema, SandboxLeaseTermsSchema, TurnFailureReasonSchema } from './commands';
import { ForkOriginSchema, TurnCheckpointSchema } from './fork';
import { ImportOriginSchema } from './import-origin';
import { SessionResourceSchema } from './resources';
import { IsoTimeSchema, TokenSchema } from './tokens';

const turn = { turn_id: TokenSchema };

/**
 * Every session event, by type: the data each carries. Past tense; the type string is the last token
 * of the event subject (`session.<id>.evt.<Type>`). `public-events.ts` renders each as a Managed
 * Agents event. Bump `EVENT_SCHEMA_VERSIONS[type]` and add an upcaster when a shape changes.
 */
export const EventDataSchemas = {
  SessionCreated: z.object({
    owner_id: TokenSchema,
    agent: z.object({ id: TokenSchema, version: z.number().int().positive() }),
    environment_id: TokenSchema,
    harness: HarnessKindSchema,
    title: z.string().nullable(),
    metadata: z.record(z.string(), z.string()),
    idempotency_key: z.string().nullable(),
    permission_mode: PermissionModeSchema,
    /** Pinned for the session's life; absent in sessions created before vaults (none). */
    vault_ids: z.array(TokenSchema).optional(),
  }),
  SessionResourceAdded: z.object({ resource: SessionResourceSchema }),
  SessionResourceRemoved: z.object({ resource_id: TokenSchema }),
  SessionUpdated: z.object({
    title: z.string().nullable().optional(),
    metadata: z.record(z.string(), z.string().nullable()).optional(),
  }),
  /** `queued` is true when a turn was running and this message waits for it. */
  UserMessageReceived: z.object({ ...turn, content: ContentSchema, queued: z.boolean() }),
  /** A turn began (the next queued message, or the one just received). */
  TurnStarted: z.object({ ...turn }),
  AgentMessageRecorded: z.object({ ...turn, content: ContentSchema, offset: z.number().int().nonnegative() }),
  AgentThinkingRecorded: z.object({ ...turn, offset: z.number().int().nonnegative() }),
  AgentToolUseRecorded: z.object({
    ...turn,
    offset: z.number().int().nonnegative(),
    harness_tool_use_id: z.string(),
    name: z.string(),
    input: z.record(z.string(), z.unknown()),
    evaluated_permission: z.enum(['allow', 'ask', 'deny']),
  }),
  AgentToolResultRecorded: z.object({
    ...turn,
    offset: z.number().int().nonnegative(),
    /** Public event id of the matching `agent.tool_use`, or null when the harness reported none. */
    tool_use_event_id: z.string().nullable(),
    content: z.array(z.record(z.string(), z.unknown())),
    is_error: z.boolean(),
  }),
  AgentMcpToolUseRecorded: z.object({
    ...turn,
    offset: z.number().int().nonnegative(),
    harness_tool_use_id: z.string(),
    mcp_server_name: z.string(),
    name: z.string(),
    input: z.record(z.string(), z.unknown()),
    evaluated_permission: z.enum(['allow', 'ask', 'deny']),
  }),
  AgentMcpToolResultRecorded: z.object({
    ...turn,
    offset: z.number().int().nonnegative(),
    /** Public event id of the matching `agent.mcp_tool_use`, or null when the harness reported none. */
    mcp_tool_use_event_id: z.string().nullable(),
    content: z.array(z.record(z.string(), z.unknown())),
    is_error: z.boolean(),
  }),
  /** The model called one of the agent's custom tools; the turn waits for the client's result. */
  AgentCustomToolUseRecorded: z.object({
    ...turn,
    offset: z.number().int().nonnegative(),
    harness_tool_use_id: z.string(),
    name: z.string(),
    input: z.record(z.string(), z.unknown()),
  }),
  /** The client's result for an `agent.custom_tool_use` (`harness_tool_use_id`: the call in the harness it answers). */
  CustomToolResultReceived: z.object({
    ...turn,
    custom_tool_use_event_id: z.string(),
    harness_tool_use_id: z.string(),
    content: ToolResultContentSchema,
    is_error: z.boolean(),
  }),
  /** Cumulative session usage after this turn's latest report. */
  UsageRecorded: z.object({ ...turn, offset: z.number().int().nonnegative(), usage: UsageSchema }),
  HarnessSessionRecorded: z.object({ ...turn, harness_session_id: z.string() }),
  /**
   * The turn waits on these event ids: `agent.tool_use` / `agent.mcp_tool_use` ids for
   * `user.tool_confirmation`, `agent.custom_tool_use` ids for `user.custom_tool_result`.
   */
  TurnAwaitingConfirmation: z.object({ ...turn, event_ids: z.array(z.string()).min(1) }),
  ToolUseConfirmed: z.object({
    ...turn,
    tool_use_event_id: z.string(),
    result: z.enum(['allow', 'deny']),
    deny_message: z.string().nullable(),
  }),
  TurnResumed: z.object({ ...turn }),
  InterruptRequested: z.object({ turn_id: TokenSchema.nullable() }),
  /** What a fork at this turn starts from (recorded just before its `TurnCompleted`). */
  TurnCheckpointed: TurnCheckpointSchema.extend({ ...turn, message_event_id: z.string().nullable().default(null) }),
  TurnCompleted: z.object({ ...turn, interrupted: z.boolean() }),
  TurnFailed: z.object({ ...turn, reason: TurnFailureReasonSchema, message: z.string() }),
  TurnTranscriptPending: z.object({ ...turn }),
  TurnRecovered: z.object({
    ...turn,
    method: z.enum(['replayed', 'reattached', 'output_recovered', 'transcript_recovered']),
  }),
  /** The kernel wants a sandbox started at this generation (startup or rebuild). */
  SandboxRequested: z.object({ generation: z.number().int().positive(), reason: z.enum(['startup', 'rebuild', 'recover']) }),
  SandboxBound: z.object({
    sandbox_id: TokenSchema,
    generation: z.number().int().positive(),
    expires_at: IsoTimeSchema.nullable(),
    warm: z.boolean(),
    /** Absent in bindings recorded before leases moved with activity. */
    lease: SandboxLeaseTermsSchema.optional(),
    /** The sandbox host it runs on (several Docker engines); absent with one. */
    host: z.string().optional(),
  }),
  SandboxStartFailed: z.object({ generation: z.number().int().positive(), message: z.string() }),
  /** The bound sandbox is gone: the session stays READY with `runtime_unavailable`. */
  SandboxLost: z.object({
    sandbox_id: TokenSchema,
    generation: z.number().int().positive(),
    cause: z.enum(['die', 'oom', 'destroy', 'missing', 'expired', 'host_lost']),
  }),
  /** Outcome of an explicit recover. */
  SessionRecovered: z.object({
    outcome: z.enum(['reattached', 'startup-requested', 'recreated', 'manual-recovery-required']),
    reason: z.enum(['sandbox_missing', 'sandbox_expired', 'sandbox_expiry_unavailable']).nullable(),
    policy: z.enum(['auto', 'manual']).nullable(),
  }),
  SessionTerminated: z.object({ sandbox_id: TokenSchema.nullable() }),
  ConversationEnded: z.object({}),
  /**
   * The sandbox was released on request (`sandbox_id` the one bound then); workspace, transcript and
   * conversation stay. `turn_id`: the turn that was waiting for tool confirmations then (it stays
   * open, its harness process is gone; the confirmation continues it in the next sandbox).
   */
  SessionPaused: z.object({ sandbox_id: TokenSchema.nullable(), turn_id: TokenSchema.nullable().optional() }),
  /** A pause asked for while a turn runs: it takes effect when the turn ends or waits for a confirmation. */
  PauseRequested: z.object({ ...turn }),
  SessionResumed: z.object({}),
  /** This session was forked: `fork_session_id` continues from the end of `turn_id`. */
  ForkCreated: z.object({
    fork_session_id: TokenSchema,
    ...turn,
    event_id: z.string().nullable(),
    seq: z.number().int().positive().nullable(),
    harness_session_id: z.string().nullable(),
    transcript: TurnCheckpointSchema.shape.transcript,
  }),
  /** This session is a fork: its conversation and workspace start as `from` left them at the end of its turn. */
  SessionForked: z.object({ from: ForkOriginSchema }),
  /** This session was imported from an archive: `from` names the source's ids and maps its output files to this install's. */
  SessionImported: z.object({ from: ImportOriginSchema }),
  SessionArchived: z.object({}),
  SessionDeleted: z.object({}),
  PermissionModeSet: z.object({ mode: PermissionModeSchema }),
  SessionErrorRaised: z.object({
    turn_id: TokenSchema.nullable(),
    error_type: z.string(),
    message: z.string(),
    retry_status: z.enum(['retrying', 'exhausted', 'terminal']),
  }),
  /** The egress refused a destination of the sandbox (`turn_id`: the turn running then, if any). */
  EgressDenied: EgressDenialSchema.extend({ turn_id: TokenSchema.nullable(), generation: z.number().int().positive() }),
} as const;

export type EventType = keyof typeof EventDataSchemas;
export const EVENT_TYPES = Object.keys(EventDataSchemas) as EventType[];
export type EventData<T extends EventType> = Readonly<z.infer<(typeof EventDataSchemas)[T]>>;

/** Schema version per event type; starts at 1. */
export const EVENT_SCHEMA_VERSIONS: Readonly<Record<EventType, number>> = Object.fromEntries(
  EVENT_TYPES.map((t) => [t, 1]),
) as Record<EventType, number>;

/** An event as `decide` returns it: no sequence or id yet. */
export type SessionEvent = { [T in EventType]: Readonly<{ type: T; data: EventData<T> }> }[EventType];
export type SessionEventOf<T extends EventType> = Extract<SessionEvent, { type: T }>;

/** An event as the journal holds it and SESSION_EVT carries it. */
export type RecordedEvent<E extends SessionEvent = SessionEvent> = E &
  Readonly<{
    /** Public id (`sevt_…`), derived from the command id and the event's index in the decision. */
    id: string;
    session_id: string;
    /** Gap-free per-session sequence, from 1; also the SSE `id:`. */
    seq: number;
    schema_version: number;
    command_id: string;
    occurred_at: string;
  }>;

export const RecordedEventMetaSchema = z.object({
  id: z.string().min(1),
  session_id: TokenSchema,
  seq: z.number().int().positive(),
  schema_version: z.number().int().positive(),
  command_id: TokenSchema,
  occurred_at: IsoTimeSchema,
});

/** Deterministic public event id: a redelivered command produces the same ids. */
export const eventIdFor = (commandId: string, index: number): string =>
  `sevt_${commandId.replace(/^cmd_/, '')}_${index}`;
