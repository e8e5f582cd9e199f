import { createHash, randomBytes } from 'node:crypto';
import { posix } from 'node:path';
import { mimeTypeOf, SessionPaths } from '@berth/contracts';
import type { Clock } from '@berth/core';
import type { BlobStore, FileRecord, FileStore, SandboxRuntime } from '@berth/ports';
import { extract } from 'tar-stream';

/** An archive entry's bytes (tar-stream's streamx readable). */
type EntryBytes = AsyncIterable<Uint8Array> & { resume(): unknown };

/** Captured per turn at most; more files than this in the outputs directory are left for the next turn. */
const MAX_FILES_PER_CAPTURE = 1000;

/** One id per (session, path): a file rewritten in a later turn replaces its earlier capture. */
export const outputFileId = (sessionId: string, path: string): string =>
  `file_${createHash('sha256').update(`${sessionId}\u0000${path}`).digest('hex').slice(0, 40)}`;

/**
 * After each turn, the files the agent wrote under `/mnt/session/outputs/` become Files API files
 * scoped to the session (`scope: {type: "session", id}`), owned by the session's owner. A file is
 * captured again only when its size or mtime changed; one the user deleted through the API is not
 * brought back until the agent changes it. The archive streams from the engine: unchanged files
 * pass by unread, changed ones stream into the blob store, nothing is held whole in memory.
 */
export class OutputCapture {
  constructor(private readonly deps: Readonly<{ runtime: SandboxRuntime; files: FileStore; blobs: BlobStore; clock: Clock }>) {}

  /** The number of files captured (new or changed). */
  async capture(input: Readonly<{ ownerId: string; sessionId: string; sandboxId: string }>): Promise<number> {
    const archive = await this.deps.runtime.getArchive(input.sandboxId, SessionPaths.outputs);
    if (archive === null) return 0;
    const entries = extract();
    archive.on('error', (e) => entries.destroy(e));
    archive.pipe(entries);
    let seen = 0;
    let captured = 0;
    for await (const entry of entries) {
      const path = entry.header.name.replace(/^outputs\/?/, '').replace(/\/$/, '');
      if (entry.header.type !== 'file' || path === '' || seen >= MAX_FILES_PER_CAPTURE) {
        entry.resume();
        continue;
      }
      seen++;
      if (await this.store(input, path, entry.header.size ?? 0, entry.header.mtime ?? new Date(0), entry as unknown as EntryBytes)) captured++;
    }
    return captured;
  }

  private async store(input: Readonly<{ ownerId: string; sessionId: string }>, path: string, size: number, mtime: Date, content: EntryBytes): Promise<boolean> {
    const id = outputFileId(input.sessionId, path);
    const fingerprint = `${size}:${mtime.getTime()}`;
    const previous = await this.deps.files.get(input.ownerId, id);
    if (previous?.output?.fingerprint === fingerprint) {
      content.resume();
      return false;
    }
    const blobKey = `blob_${randomBytes(12).toString('hex')}`;
    const hash = createHash('sha256');
    const { size: stored } = await this.deps.blobs.put(blobKey, hashing(content, hash));
    const file: FileRecord = {
      id,
      owner_id: input.ownerId,
      filename: path,
      mime_type: mimeTypeOf(posix.basename(path), null),
      size_bytes: stored,
      created_at: this.deps.clock.now().toISOString(),
      expires_at: null,
      downloadable: true,
      scope: { type: 'session', id: input.sessionId },
      blob_key: blobKey,
      sha256: hash.digest('hex'),
      output: { path, fingerprint },
      deleted: false,
    };
    await this.deps.files.put(file);
    if (previous !== null) await this.deps.blobs.delete(previous.blob_key);
    return true;
  }
}

async function* hashing(content: AsyncIterable<Uint8Array>, hash: ReturnType<typeof createHash>): AsyncIterable<Uint8Array> {
  for await (const chunk of content) {
    hash.update(chunk);
    yield chunk;
  }
}
