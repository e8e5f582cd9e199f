import { createHash, type Hash } from 'node:crypto';
import { Readable } from 'node:stream';
import {
  ARCHIVE_LIMITS,
  ArchiveOutputMetadataSchema,
  ArchiveRefused,
  checkImportable,
  classifyArchiveEntry,
  parseArchiveJournal,
  parseArchiveManifest,
  type ArchiveOutputMetadata,
  type SessionArchiveManifest,
} from '@berth/contracts';
import type { BlobStore } from '@berth/ports';
import { extract } from 'tar-stream';
import { repackWorkspace } from './workspace-repack';

/** An output file of the archive: its metadata and its bytes, staged in the blob store. */
export type StagedOutput = Readonly<{ metadata: ArchiveOutputMetadata; blob_key: string; size: number; sha256: string }>;

/** What an import takes from a checked archive; the blobs it staged are the caller's to keep or delete. */
export type ReadArchive = Readonly<{
  manifest: SessionArchiveManifest;
  journal_events: number;
  transcripts: readonly Readonly<{ path: string; data: string }>[];
  /** By source file id. */
  outputs: ReadonlyMap<string, StagedOutput>;
  /** The re-packed workspace (see `repackWorkspace`); null when the archive has none. */
  workspace_blob: string | null;
}>;

export type ArchiveReaderOptions = Readonly<{
  blobs: BlobStore;
  blobKey: () => string;
  /** The whole upload (default `ARCHIVE_LIMITS.archiveBytes`): more is a 413. */
  maxBytes: number;
  /** Fed every byte of the upload as it is read (an import's Idempotency-Key is bound to the archive's digest). */
  hash?: Hash;
}>;

/** The manifest, journal and transcripts are held in memory while the archive is read: at most this much of them together. */
const HELD_BYTES = ARCHIVE_LIMITS.entryBytes;

/**
 * Reads an uploaded session archive once, front to back, checking each entry header before its
 * bytes (`classifyArchiveEntry`), the manifest and the journal as the contract says, and that the
 * archive holds exactly what its manifest lists. Outputs and the workspace are streamed into the
 * blob store. Every refusal is an `ArchiveRefused` (a 4xx); what was staged before it is deleted.
 */
export async function readSessionArchive(source: AsyncIterable<Uint8Array>, options: ArchiveReaderOptions): Promise<ReadArchive> {
  const staged: string[] = [];
  let tooLarge: ArchiveRefused | null = null;
  const counted = Readable.from(
    (async function* () {
      let bytes = 0;
      for await (const chunk of source) {
        bytes += chunk.length;
        if (bytes > options.maxBytes) {
          tooLarge = new ArchiveRefused('ARCHIVE_TOO_LARGE', `an archive may be at most ${options.maxBytes} bytes`, { limit_bytes: options.maxBytes });
          throw tooLarge;
        }
        options.hash?.update(chunk);
        yield chunk;
      }
    })(),
  );
  const stage = async (content: AsyncIterable<Uint8Array>): Promise<{ key: string; size: number }> => {
    const key = options.blobKey();
    staged.push(key);
    return { key, size: (await options.blobs.put(key, content)).size };
  };
  try {
    return await read(counted, stage);
  } catch (error) {
    await Promise.all(staged.map((key) => options.blobs.delete(key)));
    if (tooLarge !== null) throw tooLarge;
    if (error instanceof ArchiveRefused) throw error;
    throw new ArchiveRefused('ARCHIVE_NOT_A_TAR', `the upload is not a session archive (a tar): ${error instanceof Error ? error.message : String(error)}`);
  }
}

async function read(source: Readable, stage: (content: AsyncIterable<Uint8Array>) => Promise<{ key: string; size: number }>): Promise<ReadArchive> {
  const entries = extract();
  source.on('error', (error) => entries.destroy(error));
  source.pipe(entries);
  const seen = new Set<string>();
  let held = 0;
  const text = async (entry: AsyncIterable<Uint8Array>, name: string): Promise<string> => {
    const chunks: Buffer[] = [];
    for await (const chunk of entry) {
      held += chunk.length;
      if (held > HELD_BYTES) throw new ArchiveRefused('ARCHIVE_ENTRY_TOO_LARGE', `${name}: the manifest, journal and transcripts of an archive may hold at most ${HELD_BYTES} bytes together`, { entry: name });
      chunks.push(Buffer.from(chunk));
    }
    return Buffer.concat(chunks).toString('utf8');
  };
  let manifest: SessionArchiveManifest | null = null;
  let journal: string | null = null;
  const transcripts: { path: string; data: string }[] = [];
  const metadata = new Map<string, ArchiveOutputMetadata>();
  const contents = new Map<string, { blob_key: string; size: number; sha256: string }>();
  let workspace: string | null = null;
  for await (const item of entries) {
    const { name, type, size } = item.header;
    const entry = item as AsyncIterable<Uint8Array>;
    const kind = classifyArchiveEntry({ name, type: type ?? 'file', size: size ?? 0 }, seen);
    if (kind.kind === 'directory') {
      item.resume();
      continue;
    }
    seen.add(name);
    if (kind.kind === 'manifest') {
      manifest = parseArchiveManifest(await text(entry, name));
      checkImportable(manifest);
      continue;
    }
    const m = manifest as SessionArchiveManifest;
    switch (kind.kind) {
      case 'journal':
        journal = await text(entry, name);
        break;
      case 'transcript':
        if (!m.transcripts.includes(kind.path)) throw unlisted(name);
        transcripts.push({ path: kind.path, data: await text(entry, name) });
        break;
      case 'output_metadata': {
        if (!m.outputs.includes(kind.file_id)) throw unlisted(name);
        const parsed = ArchiveOutputMetadataSchema.safeParse(parseJson(await text(entry, name)));
        if (!parsed.success) throw new ArchiveRefused('ARCHIVE_MANIFEST_INVALID', `${name}: ${parsed.error.issues[0].path.join('.')}: ${parsed.error.issues[0].message}`, { entry: name });
        metadata.set(kind.file_id, parsed.data);
        break;
      }
      case 'output_content': {
        if (!m.outputs.includes(kind.file_id)) throw unlisted(name);
        const hash = createHash('sha256');
        const { key, size: stored } = await stage(hashing(entry, hash));
        contents.set(kind.file_id, { blob_key: key, size: stored, sha256: hash.digest('hex') });
        break;
      }
      case 'workspace':
        if (!m.workspace) throw unlisted(name);
        workspace = (await stage(repackWorkspace(entry))).key;
        break;
    }
  }
  if (manifest === null) throw new ArchiveRefused('ARCHIVE_MANIFEST_MISSING', 'the archive holds no manifest.json');
  const events = parseArchiveJournal(journal ?? '', manifest);
  const missing = [
    ...manifest.transcripts.filter((path) => !transcripts.some((t) => t.path === path)).map((path) => `transcript ${path}`),
    ...manifest.outputs.filter((id) => !metadata.has(id) || !contents.has(id)).map((id) => `output ${id}`),
    ...(manifest.workspace && workspace === null ? ['workspace.tar'] : []),
  ];
  if (missing.length > 0) throw new ArchiveRefused('ARCHIVE_MANIFEST_INVALID', `the manifest lists ${missing[0]}, which the archive does not hold`, { missing: missing.slice(0, 20) });
  const outputs = new Map(manifest.outputs.map((id) => [id, { metadata: metadata.get(id) as ArchiveOutputMetadata, ...(contents.get(id) as { blob_key: string; size: number; sha256: string }) }]));
  return { manifest, journal_events: events.length, transcripts, outputs, workspace_blob: workspace };
}

const unlisted = (name: string) => new ArchiveRefused('ARCHIVE_ENTRY_UNKNOWN', `entry ${name} is not listed in the manifest`, { entry: name });

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

async function* hashing(content: AsyncIterable<Uint8Array>, hash: ReturnType<typeof createHash>): AsyncIterable<Uint8Array> {
  for await (const chunk of content) {
    hash.update(chunk);
    yield chunk;
  }
}
