import { posix } from 'node:path';
import { BerthError } from '@berth/core';
import { z } from 'zod';
import { HarnessKindSchema } from './content';
import { parseRecordedEvent } from './parse';
import type { RecordedEvent } from './events';
import { IsoTimeSchema, TokenSchema } from './tokens';

/**
 * One session as an archive (`GET /v1/sessions/{id}/export`): a tar whose layout is fixed, read back
 * by an import as untrusted input. Every refusal is a 400 with one of `ArchiveErrorCodes` (the
 * whole upload over `ARCHIVE_LIMITS.archiveBytes` is a 413).
 *
 *   manifest.json                  the manifest (first entry)
 *   journal.jsonl                  every journal event, one recorded event per line, in seq order
 *   transcripts/<sandbox path>     the harness transcript mirror, one entry per mirrored file
 *   outputs/<file id>/metadata.json, outputs/<file id>/content   the session's output files
 *   workspace.tar                  /workspace as the workspace archive route serves it
 */
export const SESSION_ARCHIVE_FORMAT = 'berth.session-archive';

export const ArchiveErrorCodes = {
  ARCHIVE_TOO_LARGE: 'ARCHIVE_TOO_LARGE',
  ARCHIVE_NOT_A_TAR: 'ARCHIVE_NOT_A_TAR',
  ARCHIVE_MANIFEST_MISSING: 'ARCHIVE_MANIFEST_MISSING',
  ARCHIVE_MANIFEST_INVALID: 'ARCHIVE_MANIFEST_INVALID',
  ARCHIVE_PATH_UNSAFE: 'ARCHIVE_PATH_UNSAFE',
  ARCHIVE_ENTRY_TYPE_REFUSED: 'ARCHIVE_ENTRY_TYPE_REFUSED',
  ARCHIVE_ENTRY_UNKNOWN: 'ARCHIVE_ENTRY_UNKNOWN',
  ARCHIVE_ENTRY_DUPLICATE: 'ARCHIVE_ENTRY_DUPLICATE',
  ARCHIVE_ENTRY_TOO_LARGE: 'ARCHIVE_ENTRY_TOO_LARGE',
  ARCHIVE_TOO_MANY_ENTRIES: 'ARCHIVE_TOO_MANY_ENTRIES',
  ARCHIVE_EVENT_INVALID: 'ARCHIVE_EVENT_INVALID',
  /** An entry of `workspace.tar` an import will not put into a sandbox (see `workspaceEntryOf`). */
  ARCHIVE_WORKSPACE_INVALID: 'ARCHIVE_WORKSPACE_INVALID',
} as const;
export type ArchiveErrorCode = (typeof ArchiveErrorCodes)[keyof typeof ArchiveErrorCodes];

export const ARCHIVE_LIMITS = {
  /** The whole upload. */
  archiveBytes: 1024 * 1024 * 1024,
  entries: 20_000,
  manifestBytes: 1024 * 1024,
  /** One entry other than the workspace archive (a journal, a transcript, an output). */
  entryBytes: 256 * 1024 * 1024,
  workspaceBytes: 1024 * 1024 * 1024,
  nameChars: 512,
} as const;

export class ArchiveRefused extends BerthError {
  constructor(code: ArchiveErrorCode, message: string, details: Readonly<Record<string, unknown>> = {}) {
    super(code, code === 'ARCHIVE_TOO_LARGE' ? 413 : 400, message, details);
  }
}

const Metadata = z.record(z.string(), z.unknown());

export const SessionArchiveManifestSchema = z
  .object({
    format: z.literal(SESSION_ARCHIVE_FORMAT),
    version: z.literal(1),
    exported_at: IsoTimeSchema,
    source: z
      .object({
        session_id: TokenSchema,
        agent: z.object({ id: TokenSchema, version: z.number().int().positive() }).strict(),
        environment_id: TokenSchema,
        harness: HarnessKindSchema,
        harness_session_id: z.string().max(200).nullable(),
      })
      .strict(),
    /** The session, the agent version it pinned and its environment as the API renders them (no secret is ever rendered). */
    session: Metadata,
    agent: Metadata,
    environment: Metadata,
    journal_events: z.number().int().nonnegative(),
    transcripts: z.array(z.string().max(ARCHIVE_LIMITS.nameChars)).max(ARCHIVE_LIMITS.entries),
    outputs: z.array(TokenSchema).max(ARCHIVE_LIMITS.entries),
    workspace: z.boolean(),
  })
  .strict();
export type SessionArchiveManifest = z.infer<typeof SessionArchiveManifestSchema>;

/** What an entry of the archive is, by its name. */
export type ArchiveEntryKind =
  | Readonly<{ kind: 'manifest' }>
  | Readonly<{ kind: 'journal' }>
  | Readonly<{ kind: 'workspace' }>
  | Readonly<{ kind: 'transcript'; path: string }>
  | Readonly<{ kind: 'output_metadata'; file_id: string }>
  | Readonly<{ kind: 'output_content'; file_id: string }>
  | Readonly<{ kind: 'directory' }>;

/** A tar header as the reader saw it. */
export type ArchiveEntryHeader = Readonly<{ name: string; type: string; size: number }>;

const TRANSCRIPT_PREFIX = 'transcripts/';
const OUTPUT = /^outputs\/([A-Za-z0-9_-]{1,128})\/(metadata\.json|content)$/;

/** A name that cannot leave the directory it is read into, whatever reads it. */
function safeName(name: string): boolean {
  if (name.length === 0 || name.length > ARCHIVE_LIMITS.nameChars) return false;
  if (name.startsWith('/') || name.includes('\\') || name.includes('\0')) return false;
  const trimmed = name.endsWith('/') ? name.slice(0, -1) : name;
  return trimmed.split('/').every((part) => part !== '' && part !== '.' && part !== '..') && posix.normalize(trimmed) === trimmed;
}

/**
 * Checks one entry header against the layout and the limits before a byte of it is read; `seen`
 * holds the names read so far (a second entry of one name would overwrite what was checked).
 */
export function classifyArchiveEntry(header: ArchiveEntryHeader, seen: ReadonlySet<string>): ArchiveEntryKind {
  const { name, type, size } = header;
  if (!safeName(name)) throw new ArchiveRefused('ARCHIVE_PATH_UNSAFE', `entry ${JSON.stringify(name.slice(0, 100))} is not a plain relative path`, { entry: name.slice(0, 200) });
  if (type === 'directory') return { kind: 'directory' };
  if (type !== 'file') throw new ArchiveRefused('ARCHIVE_ENTRY_TYPE_REFUSED', `entry ${name} is a ${type}; an archive holds only files and directories`, { entry: name, type });
  if (seen.has(name)) throw new ArchiveRefused('ARCHIVE_ENTRY_DUPLICATE', `entry ${name} appears twice`, { entry: name });
  if (seen.size >= ARCHIVE_LIMITS.entries) throw new ArchiveRefused('ARCHIVE_TOO_MANY_ENTRIES', `an archive holds at most ${ARCHIVE_LIMITS.entries} entries`);
  const kind = kindOf(name);
  const limit = kind.kind === 'manifest' ? ARCHIVE_LIMITS.manifestBytes : kind.kind === 'workspace' ? ARCHIVE_LIMITS.workspaceBytes : ARCHIVE_LIMITS.entryBytes;
  if (!Number.isSafeInteger(size) || size < 0 || size > limit) throw new ArchiveRefused('ARCHIVE_ENTRY_TOO_LARGE', `entry ${name} is larger than ${limit} bytes`, { entry: name, limit });
  if (seen.size === 0 && kind.kind !== 'manifest') throw new ArchiveRefused('ARCHIVE_MANIFEST_MISSING', 'the first entry of an archive is manifest.json');
  return kind;
}

function kindOf(name: string): ArchiveEntryKind {
  if (name === 'manifest.json') return { kind: 'manifest' };
  if (name === 'journal.jsonl') return { kind: 'journal' };
  if (name === 'workspace.tar') return { kind: 'workspace' };
  if (name.startsWith(TRANSCRIPT_PREFIX) && name.length > TRANSCRIPT_PREFIX.length) return { kind: 'transcript', path: `/${name.slice(TRANSCRIPT_PREFIX.length)}` };
  const output = OUTPUT.exec(name);
  if (output) return output[2] === 'content' ? { kind: 'output_content', file_id: output[1] } : { kind: 'output_metadata', file_id: output[1] };
  throw new ArchiveRefused('ARCHIVE_ENTRY_UNKNOWN', `entry ${name} is not part of a session archive`, { entry: name });
}

/** The archive entry name of a mirrored transcript file (its absolute sandbox path, below `transcripts/`). */
export const transcriptEntryName = (path: string): string => `${TRANSCRIPT_PREFIX}${path.replace(/^\/+/, '')}`;

export function parseArchiveManifest(text: string): SessionArchiveManifest {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new ArchiveRefused('ARCHIVE_MANIFEST_INVALID', 'manifest.json is not JSON');
  }
  const parsed = SessionArchiveManifestSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = [...issue.path.map(String), ...(issue.code === 'unrecognized_keys' ? issue.keys.slice(0, 1) : [])].join('.');
  throw new ArchiveRefused('ARCHIVE_MANIFEST_INVALID', `manifest.json: ${field ? `${field}: ` : ''}${issue.message}`, { field });
}

/**
 * The journal, line by line: each a recorded event of a known type whose data fits its schema, of
 * the manifest's session, in gap-free seq order from 1.
 */
export function parseArchiveJournal(text: string, manifest: SessionArchiveManifest): RecordedEvent[] {
  const lines = text.split('\n').filter((line) => line.trim() !== '');
  const events: RecordedEvent[] = [];
  for (const [index, line] of lines.entries()) {
    let event: RecordedEvent;
    try {
      event = parseRecordedEvent(JSON.parse(line));
    } catch (error) {
      throw new ArchiveRefused('ARCHIVE_EVENT_INVALID', `journal.jsonl line ${index + 1}: ${error instanceof Error ? error.message : String(error)}`, { line: index + 1 });
    }
    if (event.session_id !== manifest.source.session_id || event.seq !== index + 1) {
      throw new ArchiveRefused('ARCHIVE_EVENT_INVALID', `journal.jsonl line ${index + 1}: not event ${index + 1} of session ${manifest.source.session_id}`, { line: index + 1 });
    }
    events.push(event);
  }
  if (events.length !== manifest.journal_events) {
    throw new ArchiveRefused('ARCHIVE_EVENT_INVALID', `journal.jsonl holds ${events.length} events; the manifest says ${manifest.journal_events}`);
  }
  return events;
}
