import { z } from 'zod';

/** What the kernel replies to a command's sender. */
export const CommandOutcomeSchema = z.discriminatedUnion('ok', [
  z.object({
    ok: z.literal(true),
    command_id: z.string(),
    session_id: z.string(),
    /** The events this command appended (empty for a no-op or a redelivery). */
    events: z.array(z.object({ id: z.string(), seq: z.number().int(), type: z.string() })),
    duplicate: z.boolean(),
    /** Session version (last journal seq) after the command. */
    last_seq: z.number().int().nonnegative(),
  }),
  z.object({
    ok: z.literal(false),
    command_id: z.string(),
    session_id: z.string(),
    error: z.object({
      code: z.string(),
      status: z.number().int(),
      message: z.string(),
      details: z.record(z.string(), z.unknown()).default({}),
    }),
  }),
]);
export type CommandOutcome = z.infer<typeof CommandOutcomeSchema>;
