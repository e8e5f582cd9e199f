import { posix } from 'node:path';
import { z } from 'zod';
import { ArchiveRefused, type ArchiveEntryHeader, type SessionArchiveManifest } from './session-archive';
import { SessionPaths } from './resources';
import { HarnessSessionIdSchema, IMPORT_LIMITS } from './import-origin';
import { IsoTimeSchema } from './tokens';

/** An output's metadata as the archive carries it (what the import keeps of it). */
export const ArchiveOutputMetadataSchema = z.object({
  filename: z.string().min(1).max(255),
  mime_type: z.string().min(1).max(255),
  created_at: IsoTimeSchema,
});
export type ArchiveOutputMetadata = z.infer<typeof ArchiveOutputMetadataSchema>;

const TRANSCRIPT_ROOT = `${SessionPaths.home}/`;
/** Berth's own files in the sandbox (a turn's output, stdin feed, pid and exit code): never a transcript's place. */
const BERTH_DIR = `${SessionPaths.home}/.berth/`;

/**
 * What an import refuses in a manifest that fits the schema: a harness conversation id it could not
 * pass to a harness safely, a transcript outside the sandbox home or in Berth's own files there (a
 * restore writes it there), more outputs than an import carries.
 */
export function checkImportable(manifest: SessionArchiveManifest): void {
  const hsid = manifest.source.harness_session_id;
  if (hsid !== null && !HarnessSessionIdSchema.safeParse(hsid).success) {
    throw new ArchiveRefused('ARCHIVE_MANIFEST_INVALID', 'manifest.json: source.harness_session_id: must be 1-200 letters, digits, ".", "_" or "-"', { field: 'source.harness_session_id' });
  }
  for (const path of manifest.transcripts) {
    if (!path.startsWith(TRANSCRIPT_ROOT) || path.startsWith(BERTH_DIR) || posix.normalize(path) !== path || path.split('/').includes('..')) {
      throw new ArchiveRefused('ARCHIVE_PATH_UNSAFE', `transcript ${JSON.stringify(path.slice(0, 100))} is not below ${SessionPaths.home} (outside ${BERTH_DIR})`, { entry: path.slice(0, 200) });
    }
  }
  if (manifest.outputs.length > IMPORT_LIMITS.outputs) {
    throw new ArchiveRefused('ARCHIVE_MANIFEST_INVALID', `manifest.json: outputs: an import carries at most ${IMPORT_LIMITS.outputs} output files`, { field: 'outputs' });
  }
}

/** One entry of the workspace archive as it is put into the sandbox's `/workspace` (owned by the sandbox user). */
export type RestoredWorkspaceEntry =
  | Readonly<{ kind: 'skip' }>
  | Readonly<{ kind: 'directory'; name: string; mode: number }>
  | Readonly<{ kind: 'file'; name: string; mode: number; size: number }>
  | Readonly<{ kind: 'symlink'; name: string; target: string }>;

export type RestoredWorkspaceEntryHeader = ArchiveEntryHeader & Readonly<{ mode?: number; linkname?: string | null }>;

const WORKSPACE_PREFIX = 'workspace/';

const invalid = (name: string, why: string) => new ArchiveRefused('ARCHIVE_WORKSPACE_INVALID', `workspace.tar: entry ${JSON.stringify(name.slice(0, 100))} ${why}`, { entry: name.slice(0, 200) });

/**
 * Checks one entry of `workspace.tar` (the archive `GET …/workspace` serves: `workspace/…`) and
 * says how it is put back below `/workspace`: plain relative names only, files, directories and
 * symlinks only, no set-id or sticky bits, nothing through a symlink the archive made earlier
 * (`symlinks`: their names so far). A relative symlink target is made absolute, resolved from
 * where the link is, so the extraction keeps its meaning and never refuses it as leaving the tree.
 */
export function workspaceEntryOf(header: RestoredWorkspaceEntryHeader, symlinks: ReadonlySet<string>): RestoredWorkspaceEntry {
  const raw = header.name.endsWith('/') ? header.name.slice(0, -1) : header.name;
  if (raw === 'workspace' && header.type === 'directory') return { kind: 'skip' };
  if (!raw.startsWith(WORKSPACE_PREFIX)) throw invalid(header.name, 'is not below workspace/');
  const name = raw.slice(WORKSPACE_PREFIX.length);
  const parts = name.split('/');
  if (name === '' || name.length > 4096 || name.includes('\0') || name.includes('\\') || parts.some((p) => p === '' || p === '.' || p === '..')) throw invalid(header.name, 'is not a plain relative path');
  for (let i = 1; i < parts.length; i++) if (symlinks.has(parts.slice(0, i).join('/'))) throw invalid(header.name, 'is below a symlink of the archive');
  const mode = (header.mode ?? 0o644) & 0o777;
  if (header.type === 'directory') return { kind: 'directory', name, mode };
  if (header.type === 'file') {
    if (!Number.isSafeInteger(header.size) || header.size < 0) throw invalid(header.name, 'has no valid size');
    return { kind: 'file', name, mode, size: header.size };
  }
  if (header.type === 'symlink') {
    const link = header.linkname ?? '';
    if (link === '' || link.length > 4096 || link.includes('\0')) throw invalid(header.name, 'is a symlink without a valid target');
    return { kind: 'symlink', name, target: posix.resolve(posix.join(SessionPaths.workspace, posix.dirname(name)), link) };
  }
  throw invalid(header.name, `is a ${header.type}; a workspace holds files, directories and symlinks`);
}
