import { z } from 'zod';
import { TokenSchema } from './tokens';

/** How many settled turns a session remembers as places to fork from (older ones cannot be forked). */
export const FORK_POINT_HISTORY = 64;

/**
 * What the sandbox-manager records when a turn ends (`berth.turn_checkpointed`): how far each
 * harness transcript file was mirrored at that moment (the cut a fork's transcript takes), and the
 * per-turn workspace snapshot, null when none was taken (a `volume` workspace, or snapshots off).
 * `workspace_unsupported`: none is ever taken by this manager's workspaces (`volume` ones, the
 * Kubernetes runtime), which a fork's refusal says. `dropped_turn_ids`: earlier turns whose
 * snapshots the environment's retention removed to make room.
 */
export const TurnCheckpointSchema = z.object({
  transcript: z.array(z.object({ path: z.string().min(1).max(1024), bytes: z.number().int().nonnegative() })).max(256),
  workspace: z.object({ bytes: z.number().int().nonnegative(), files: z.number().int().nonnegative() }).nullable(),
  workspace_unsupported: z.literal(true).optional(),
  dropped_turn_ids: z.array(TokenSchema).max(1024).default([]),
});
export type TurnCheckpoint = z.infer<typeof TurnCheckpointSchema>;

/** Which turn a fork continues from: its `user.message` event id, or that event's seq; neither: the latest completed turn. */
export const ForkSelectorSchema = z.union([
  z.strictObject({ event_id: z.string().min(1).max(256) }),
  z.strictObject({ seq: z.number().int().positive() }),
  z.strictObject({}),
]);
export type ForkSelector = z.infer<typeof ForkSelectorSchema>;

/** Where a forked session came from: the session, the turn, and that turn's `user.message`. */
export const ForkOriginSchema = z.object({
  session_id: TokenSchema,
  turn_id: TokenSchema,
  event_id: z.string().min(1).max(256).nullable(),
  seq: z.number().int().positive().nullable(),
  /** The harness conversation to resume in the fork (its transcript is cut at the turn). */
  harness_session_id: z.string().max(256).nullable(),
});
export type ForkOrigin = z.infer<typeof ForkOriginSchema>;
