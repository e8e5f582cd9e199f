import { z } from 'zod';
import { CheckoutSchema, MAX_SESSION_RESOURCES, MountPathSchema, RepositoryUrlSchema } from './resources';
import { IsoTimeSchema, TokenSchema } from './tokens';

/**
 * What `POST /v1/sessions/import` takes from an archive on top of its layout checks
 * (`session-archive.ts`), and what the imported session's journal records of where it came from.
 *
 * Ids: everything Berth names (session, agent, environment, output files, events, turns) gets a new
 * id on import; the source's are recorded in `berth.session_imported` (`ImportOrigin`). The source
 * journal is not replayed: its events happened on the source install and stay in the archive. The
 * harness transcript is restored byte for byte, ids and all: they are the harness's own (its
 * conversation id, message and tool-use ids), meaningful only to it, and it resumes by them.
 */
export const IMPORT_LIMITS = {
  /** Output files an import carries over (each is named in the import event's mapping). */
  outputs: 1000,
} as const;

/** A harness conversation id as it is passed to the harness (`--resume <id>`) and used in its transcript's file name. */
export const HarnessSessionIdSchema = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/, "must be 1-200 letters, digits, '.', '_' or '-'");

/**
 * A resource of the archived session that the import did not recreate, as the source rendered it
 * (without its times): a file resource's file is not in the archive (only outputs are) and a
 * repository's token is never exported, so neither could be put in place here as it was; the
 * importer attaches what the session still needs again.
 */
export const UncarriedResourceSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('file'), id: TokenSchema, file_id: TokenSchema, mount_path: MountPathSchema }),
  z.object({ type: z.literal('github_repository'), id: TokenSchema, url: RepositoryUrlSchema, checkout: CheckoutSchema.nullable(), mount_path: MountPathSchema }),
]);
export type UncarriedResource = z.infer<typeof UncarriedResourceSchema>;

/** Where an imported session came from: the source's ids, the new id of each output file, the resources left behind. */
export const ImportOriginSchema = z.object({
  session_id: TokenSchema,
  agent: z.object({ id: TokenSchema, version: z.number().int().positive() }),
  environment_id: TokenSchema,
  exported_at: IsoTimeSchema,
  /** Events the source journal held (they stay in the archive). */
  journal_events: z.number().int().nonnegative(),
  /** The harness conversation the imported session resumes (its transcript is restored). */
  harness_session_id: HarnessSessionIdSchema.nullable(),
  /** Each output file of the source (`from`) and the file it is here (`to`). */
  files: z.array(z.object({ from: TokenSchema, to: TokenSchema })).max(IMPORT_LIMITS.outputs),
  /** The blob holding the workspace to restore into the session's first sandbox (consumed by it); null: none. */
  workspace_blob: TokenSchema.nullable(),
  /** The source session's resources, none of which the import recreated (absent from imports recorded before it was named). */
  resources_not_carried: z.array(UncarriedResourceSchema).max(MAX_SESSION_RESOURCES).default([]),
});
export type ImportOrigin = z.infer<typeof ImportOriginSchema>;

