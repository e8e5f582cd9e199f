import { z } from 'zod';
import { ContentSchema, HarnessKindSchema, PermissionModeSchema, ToolResultContentSchema, UsageSchema } from './content';
import { ForkOriginSchema, TurnCheckpointSchema } from './fork';
import { ImportOriginSchema } from './import-origin';
import { MAX_SESSION_RESOURCES, SessionResourceSchema } from './resources';
import { MAX_SESSION_VAULTS } from './integrations/vaults';
import { IsoTimeSchema, TokenSchema } from './tokens';

/**
 * How a sandbox lease moves with activity: `expires_at` becomes each turn's start and end plus
 * `idle_timeout_seconds`, never past `max_expires_at` (the sandbox's lifetime end, or null). A
 * binding without terms keeps the `expires_at` it was bound with.
 */
export const SandboxLeaseTermsSchema = z.object({
  idle_timeout_seconds: z.number().int().positive(),
  max_expires_at: IsoTimeSchema.nullable(),
});
export type SandboxLeaseTerms = z.infer<typeof SandboxLeaseTermsSchema>;

/** The events that restart a lease: the turn activity the sandbox-manager's lease sweep counts. */
export const LEASE_ACTIVITY_EVENTS: ReadonlySet<string> = new Set(['TurnStarted', 'TurnCompleted', 'TurnFailed']);

/** A lease's end after activity at `at` (ISO time), by its terms. */
export function leaseExpiryAfter(terms: SandboxLeaseTerms, at: string): string {
  const idleEnd = Date.parse(at) + terms.idle_timeout_seconds * 1000;
  const lifetimeEnd = terms.max_expires_at === null ? Number.POSITIVE_INFINITY : Date.parse(terms.max_expires_at);
  return new Date(Math.min(idleEnd, lifetimeEnd)).toISOString();
}

/**
 * What the harness produced, in harness-neutral form. Each output becomes one session event.
 * `tool_use_id` / `tool_result.tool_use_id` are the harness's own ids (e.g. `toolu_…`); the kernel
 * maps them to the public event id of the `agent.tool_use`.
 */
export const AgentOutputSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('message'), content: ContentSchema }),
  z.object({ kind: z.literal('thinking') }),
  z.object({
    kind: z.literal('tool_use'),
    tool_use_id: z.string().min(1).max(256),
    name: z.string().min(1).max(256),
    input: z.record(z.string(), z.unknown()),
    /** The harness asks before running the tool (permission mode `always_ask`). */
    needs_confirmation: z.boolean().default(false),
  }),
  z.object({
    kind: z.literal('tool_result'),
    tool_use_id: z.string().min(1).max(256),
    content: z.array(z.record(z.string(), z.unknown())),
    is_error: z.boolean(),
  }),
  /** A call of a tool of one of the agent's MCP servers (`agent.mcp_tool_use`). */
  z.object({
    kind: z.literal('mcp_tool_use'),
    tool_use_id: z.string().min(1).max(256),
    server_name: z.string().min(1).max(256),
    name: z.string().min(1).max(256),
    input: z.record(z.string(), z.unknown()),
    needs_confirmation: z.boolean().default(false),
  }),
  z.object({
    kind: z.literal('mcp_tool_result'),
    tool_use_id: z.string().min(1).max(256),
    content: z.array(z.record(z.string(), z.unknown())),
    is_error: z.boolean(),
  }),
  /** A call of one of the agent's custom tools (`agent.custom_tool_use`): the turn waits for `user.custom_tool_result`. */
  z.object({
    kind: z.literal('custom_tool_use'),
    tool_use_id: z.string().min(1).max(256),
    name: z.string().min(1).max(256),
    input: z.record(z.string(), z.unknown()),
  }),
  z.object({ kind: z.literal('usage'), usage: UsageSchema }),
]);
export type AgentOutput = z.infer<typeof AgentOutputSchema>;

/** Facts a caller gathers about the sandbox before asking the kernel to recover (decide stays pure). */
export const SandboxProbeSchema = z.object({
  /** The bound container exists on the Docker host. */
  exists: z.boolean(),
  /** It is running and its harness can be reached. */
  running: z.boolean(),
  /** The probe could read the lease's expiry; false means `sandbox_expiry_unavailable`. */
  expiry_known: z.boolean().default(true),
  expired: z.boolean().default(false),
});
export type SandboxProbe = z.infer<typeof SandboxProbeSchema>;

/** A destination the egress proxy refused, and why (`berth.egress_denied`). */
export const EgressDenialSchema = z.object({
  host: z.string().min(1).max(255),
  port: z.number().int().min(1).max(65_535),
  /** `vault_credential_expired`: the session's credential for that URL is past its `expires_at`, so the request was not sent. */
  reason: z.enum(['network_none', 'host_not_allowed', 'platform_address', 'invalid_target', 'vault_credential_expired']),
  /** The environment setting that would allow it; null when none can. */
  setting: z.string().max(128).nullable(),
  message: z.string().max(2048),
});

/** Named reasons a turn can fail with. Every failed turn carries one. */
export const TurnFailureReasonSchema = z.enum([
  'harness_failed',
  'model_error',
  'sandbox_lost',
  'sandbox_start_failed',
  'input_not_delivered',
  'no_progress',
  'transcript_unrecoverable',
  'dead_lettered',
  'resource_unavailable',
  'workspace_full',
]);
export type TurnFailureReason = z.infer<typeof TurnFailureReasonSchema>;

/**
 * Every command the session kernel accepts, by type: the data each carries. The type string is
 * also the last token of the command subject (`session.<id>.cmd.<Type>`).
 */
export const CommandDataSchemas = {
  /** Create the session. Idempotent on (owner, idempotency key, agent). */
  CreateSession: z.object({
    owner_id: TokenSchema,
    agent: z.object({ id: TokenSchema, version: z.number().int().positive() }),
    environment_id: TokenSchema,
    harness: HarnessKindSchema,
    title: z.string().max(512).nullable().default(null),
    metadata: z.record(z.string().max(64), z.string().max(512)).default({}),
    idempotency_key: z.string().min(1).max(256).nullable().default(null),
    permission_mode: PermissionModeSchema.default('always_allow'),
    /** Files and repositories in place before the first turn (ids and mount paths resolved by the caller). */
    resources: z.array(SessionResourceSchema).max(MAX_SESSION_RESOURCES).optional(),
    /** A fork: the session and turn whose conversation and workspace it continues. */
    fork: ForkOriginSchema.optional(),
    /** An import: the archived session whose conversation (transcript) and workspace it continues. */
    import: ImportOriginSchema.optional(),
    /** Vaults whose credentials the egress injects for this session (checked by the caller: the owner's, not archived). */
    vault_ids: z.array(TokenSchema).max(MAX_SESSION_VAULTS).optional(),
  }),
  /**
   * Sent to the session forked from: picks the turn (its `user.message` id or seq; neither: the
   * latest completed turn) and records that `fork_session_id` continues from it.
   */
  ForkSession: z.object({
    fork_session_id: TokenSchema,
    event_id: z.string().min(1).max(256).nullable().default(null),
    seq: z.number().int().positive().nullable().default(null),
  }),
  /** Attach a file or repository; it is mounted before the next turn runs. */
  AddSessionResource: z.object({ resource: SessionResourceSchema }),
  /** Detach a resource: it is not restored into later sandboxes (what is already in the workspace stays). */
  RemoveSessionResource: z.object({ resource_id: TokenSchema }),
  /** Patch title and metadata (a null metadata value deletes that key). */
  UpdateSession: z.object({
    title: z.string().max(512).nullable().optional(),
    metadata: z.record(z.string().max(64), z.string().max(512).nullable()).optional(),
  }),
  /** A user message: starts a turn when idle, otherwise waits in the queue. */
  SubmitUserMessage: z.object({ turn_id: TokenSchema, content: ContentSchema }),
  /** Stop the running turn at the next safe point (ends with `end_turn`). */
  InterruptTurn: z.object({}),
  /** Answer a tool use that waits for confirmation. `tool_use_id` is the `agent.tool_use` event id. */
  ConfirmToolUse: z.object({
    tool_use_id: TokenSchema,
    result: z.enum(['allow', 'deny']),
    deny_message: z.string().max(10_000).nullable().default(null),
  }),
  /** The client ran a custom tool: its result continues the turn. `custom_tool_use_id` is the `agent.custom_tool_use` event id. */
  SubmitCustomToolResult: z.object({
    custom_tool_use_id: TokenSchema,
    content: ToolResultContentSchema.default([]),
    is_error: z.boolean().default(false),
  }),
  /** Harness output for a running turn; `offset` is the index of the first output in the turn's output file. */
  RecordAgentOutput: z.object({
    turn_id: TokenSchema,
    generation: z.number().int().nonnegative(),
    offset: z.number().int().nonnegative(),
    outputs: z.array(AgentOutputSchema).min(1).max(500),
    harness_session_id: z.string().max(256).nullable().default(null),
  }),
  /** The harness finished the turn. */
  CompleteTurn: z.object({
    turn_id: TokenSchema,
    generation: z.number().int().nonnegative(),
    interrupted: z.boolean().default(false),
    harness_session_id: z.string().max(256).nullable().default(null),
    /** The transcript cut and workspace snapshot taken at the turn's end (what a fork at this turn starts from). */
    checkpoint: TurnCheckpointSchema.optional(),
  }),
  /** The turn cannot finish; `reason` is one of the named failure reasons. */
  FailTurn: z.object({
    turn_id: TokenSchema,
    reason: TurnFailureReasonSchema,
    message: z.string().max(4096),
  }),
  /** The reconciler finished a turn from its transcript mirror or recovered output. */
  RecoverTurn: z.object({
    turn_id: TokenSchema,
    method: z.enum(['replayed', 'reattached', 'output_recovered', 'transcript_recovered']),
  }),
  /** The turn's harness stopped without a terminal; its transcript must be recovered. */
  MarkTranscriptPending: z.object({ turn_id: TokenSchema }),
  /** The sandbox-manager started (or adopted) a sandbox for the session. */
  BindSandbox: z.object({
    sandbox_id: TokenSchema,
    generation: z.number().int().positive(),
    expires_at: IsoTimeSchema.nullable(),
    warm: z.boolean().default(false),
    lease: SandboxLeaseTermsSchema.optional(),
    /** The sandbox host (Docker engine) it runs on, when the manager places sandboxes on several. */
    host: z.string().min(1).max(63).optional(),
  }),
  /** A sandbox could not be started. */
  ReportSandboxStartFailed: z.object({ generation: z.number().int().positive(), message: z.string().max(4096) }),
  /**
   * Docker reported the bound container gone (`die`, `oom`, `destroy`), a probe found it missing, or
   * the host it ran on stopped answering (`host_lost`).
   */
  ReportSandboxDied: z.object({
    sandbox_id: TokenSchema,
    generation: z.number().int().positive(),
    cause: z.enum(['die', 'oom', 'destroy', 'missing', 'host_lost']),
    exit_code: z.number().int().nullable().default(null),
  }),
  /** The sandbox lease expired (the predicate was evaluated by the sweeper against its clock). */
  ReportSandboxExpired: z.object({ sandbox_id: TokenSchema, generation: z.number().int().positive() }),
  /** The egress proxy refused a destination the sandbox asked for (the user sees why and what would allow it). */
  ReportEgressDenied: EgressDenialSchema.extend({ generation: z.number().int().positive() }),
  /** Stop and release the sandbox; the conversation can continue in a new one. */
  TerminateSession: z.object({}),
  /** End the conversation (the harness conversation is not resumed afterwards). */
  EndConversation: z.object({}),
  /** Release the sandbox and keep everything else; the next message or ResumeSession brings it back. */
  PauseSession: z.object({}),
  ResumeSession: z.object({}),
  ArchiveSession: z.object({}),
  DeleteSession: z.object({}),
  /** Explicit recovery, with the sandbox facts the caller probed. */
  RecoverSession: z.object({ probe: SandboxProbeSchema }),
  SetPermissionMode: z.object({ mode: PermissionModeSchema }),
  /** Record an error the session's user should see (e.g. a dead-lettered command). */
  RaiseSessionError: z.object({
    error_type: z.string().max(128),
    message: z.string().max(4096),
    retry_status: z.enum(['retrying', 'exhausted', 'terminal']),
  }),
} as const;

export type CommandType = keyof typeof CommandDataSchemas;
export const COMMAND_TYPES = Object.keys(CommandDataSchemas) as CommandType[];
export type CommandData<T extends CommandType> = Readonly<z.infer<(typeof CommandDataSchemas)[T]>>;

/** Who sent the command and when; the kernel's dedupe key is `command_id`. */
export const CommandMetaSchema = z.object({
  command_id: TokenSchema,
  session_id: TokenSchema,
  /** The authenticated caller (API key owner) or the service that reports a fact. */
  actor: z.string().min(1).max(128),
  issued_at: IsoTimeSchema,
  correlation_id: z.string().max(128).optional(),
  causation_id: z.string().max(128).optional(),
});
export type CommandMeta = Readonly<z.infer<typeof CommandMetaSchema>>;

export type SessionCommand = {
  [T in CommandType]: Readonly<{ type: T; data: CommandData<T>; meta: CommandMeta }>;
}[CommandType];
export type SessionCommandOf<T extends CommandType> = Extract<SessionCommand, { type: T }>;
