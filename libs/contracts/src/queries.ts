import { z } from 'zod';
import { TokenSchema } from './tokens';

/**
 * Request/reply queries sent to the sandbox-manager (core NATS on
 * `Subjects.query('sandbox-manager', SandboxManagerQueries.<name>)`, bounded by a timeout). The
 * turn-reconciler's requests name the turn and the sandbox generation they are about: a responder
 * whose sandbox is at another generation, or that runs another turn, answers with the facts it has
 * and the reconciler discards them (fencing). `sandbox` is the session-level question the gateway
 * asks before an explicit recover, when there may be no turn at all.
 */
export const SandboxManagerQueries = {
  probe: 'probe',
  sandbox: 'sandbox',
  reattachTurn: 'reattach-turn',
  recoverTurnOutput: 'recover-turn-output',
  restoreTranscript: 'restore-transcript',
  workspace: 'workspace',
} as const;
export type SandboxManagerQuery = (typeof SandboxManagerQueries)[keyof typeof SandboxManagerQueries];

const turnAtGeneration = {
  session_id: TokenSchema,
  turn_id: TokenSchema,
  /** The sandbox generation the caller believes the turn runs in. */
  generation: z.number().int().nonnegative(),
};

export const TurnProbeRequestSchema = z.object(turnAtGeneration);
export type TurnProbeRequest = z.infer<typeof TurnProbeRequestSchema>;

/** What the sandbox-manager can see of one turn, right now. */
export const TurnProbeFactsSchema = z.object({
  /** The session's container at that generation: `starting` while the manager is still creating it. */
  sandbox: z.enum(['running', 'starting', 'exited', 'missing']),
  harness: z.object({
    /** The harness process for this turn still runs inside the container. */
    alive: z.boolean(),
    /** The sandbox-manager is streaming its output right now (nothing to reattach). */
    attached: z.boolean(),
  }),
  /** The turn's input reached the harness (written to stdin / its input file); null when unknown. */
  input_delivered: z.boolean().nullable(),
  /** The turn's output file in the sandbox; null when there is none (or no sandbox to read it from). */
  output: z
    .object({
      /** The file ends with the harness's terminal line (the turn finished inside the sandbox). */
      complete: z.boolean(),
      /** Offset of the last output line in the file (same numbering as `RecordAgentOutput.offset`); null when none. */
      last_offset: z.number().int().nonnegative().nullable(),
    })
    .nullable(),
});
export type TurnProbeFacts = z.infer<typeof TurnProbeFactsSchema>;

/** Session-level question (no turn): the state of the session's container at one generation. */
export const SandboxStateRequestSchema = z.object({
  session_id: TokenSchema,
  /** The generation the caller's binding records. */
  generation: z.number().int().nonnegative(),
});
export type SandboxStateRequest = z.infer<typeof SandboxStateRequestSchema>;

/** The answer echoes the request, so a caller can discard one about another generation. */
export const SandboxStateReplySchema = SandboxStateRequestSchema.extend({ sandbox: TurnProbeFactsSchema.shape.sandbox });
export type SandboxStateReply = z.infer<typeof SandboxStateReplySchema>;

/** The probe's answer: the generation is the one the facts are about (the responder's, not the caller's). */
export const TurnProbeReplySchema = z.object({ ...turnAtGeneration, facts: TurnProbeFactsSchema });
export type TurnProbeReply = z.infer<typeof TurnProbeReplySchema>;

/** Reattach to a harness still running: stream its output again from `from_offset` (outputs already journaled are skipped). */
export const TurnReattachRequestSchema = z.object({ ...turnAtGeneration, from_offset: z.number().int().nonnegative() });
export type TurnReattachRequest = z.infer<typeof TurnReattachRequestSchema>;

/** Read the finished output file and report outputs `from_offset..through_offset` as `RecordAgentOutput`, then reply. */
export const TurnOutputRecoveryRequestSchema = z.object({
  ...turnAtGeneration,
  from_offset: z.number().int().nonnegative(),
  through_offset: z.number().int().nonnegative().nullable(),
});
export type TurnOutputRecoveryRequest = z.infer<typeof TurnOutputRecoveryRequestSchema>;

/**
 * The turn's sandbox is gone: check that the transcript mirror restores the harness conversation
 * (so the next sandbox resumes it with the harness's own resume flag), and reply.
 */
export const TranscriptRestoreRequestSchema = z.object({ ...turnAtGeneration, transcript_bytes: z.number().int().nonnegative() });
export type TranscriptRestoreRequest = z.infer<typeof TranscriptRestoreRequestSchema>;

/**
 * Outcome of a reattach / output recovery / transcript restore. `failed` is transient (retry);
 * `impossible` is definitive for this attempt (the harness or file or transcript is not usable).
 */
export const TurnEffectReplySchema = z.object({
  outcome: z.enum(['done', 'failed', 'impossible']),
  message: z.string().max(4096).default(''),
});
export type TurnEffectReply = z.infer<typeof TurnEffectReplySchema>;

/**
 * The gateway's read of a session's workspace (`GET /v1/sessions/{id}/workspace…`): the
 * sandbox-manager reads it from the session's sandbox (or a short-lived reader container that
 * mounts the workspace when none runs) and stages an archive or a file in the blob store, whose key
 * it answers with (the gateway streams it, then deletes it); a listing comes back inline.
 * `path` is relative to `/workspace`.
 */
export const WorkspaceReadRequestSchema = z.object({
  session_id: TokenSchema,
  path: z.string().max(4096),
  kind: z.enum(['archive', 'file', 'list']),
});
export type WorkspaceReadRequest = z.infer<typeof WorkspaceReadRequestSchema>;

export const WorkspaceEntrySchema = z.object({
  path: z.string(),
  type: z.enum(['file', 'directory', 'symlink']),
  size: z.number().int().nonnegative(),
  modified_at: z.string(),
});
export type WorkspaceEntry = z.infer<typeof WorkspaceEntrySchema>;

export const WorkspaceReadReplySchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('staged'), blob_key: TokenSchema, size: z.number().int().nonnegative() }),
  z.object({ kind: z.literal('entries'), entries: z.array(WorkspaceEntrySchema), truncated: z.boolean() }),
  z.object({ kind: z.literal('refused'), status: z.number().int(), code: z.string(), message: z.string() }),
]);
export type WorkspaceReadReply = z.infer<typeof WorkspaceReadReplySchema>;
