import { z } from 'zod';

/** Key-value metadata on agents, environments and sessions: at most 16 pairs, keys ≤ 64, values ≤ 512 characters. */
export const MetadataSchema = z
  .record(z.string().min(1).max(64), z.string().max(512))
  .refine((m) => Object.keys(m).length <= 16, 'at most 16 metadata pairs');

/** Patch semantics: a null value deletes the key. */
export const MetadataPatchSchema = z
  .record(z.string().min(1).max(64), z.string().max(512).nullable())
  .refine((m) => Object.keys(m).length <= 16, 'at most 16 metadata pairs');

/** Applies a metadata patch: a string upserts its key, null deletes it. */
export function patchMetadata(current: Readonly<Record<string, string>>, patch: Readonly<Record<string, string | null>> | null | undefined): Record<string, string> {
  const next = { ...current };
  for (const [key, value] of Object.entries(patch ?? {})) {
    if (value === null) delete next[key];
    else next[key] = value;
  }
  return next;
}
