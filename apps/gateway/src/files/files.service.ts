import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { fileNameOf, mimeTypeOf } from '@berth/contracts';
import { NotFoundError, ValidationError, type Clock, type IdGenerator } from '@berth/core';
import type { BlobStore, FileRecord, FileStore } from '@berth/ports';
import { DEFAULT_PAGE_LIMIT } from '../http/schemas';
import type { RouteInput } from '../http/route';
import { renderFile } from './file.render';
import { EXPIRES_IN_SECONDS, type FileRoutes } from './files.schemas';
import { readUpload } from './multipart-upload';

export const fileNotFound = () => new NotFoundError('file not found', 'FILE_NOT_FOUND');

export type FilesServiceDeps = Readonly<{ files: FileStore; blobs: BlobStore; clock: Clock; ids: IdGenerator; maxBytes: number }>;

/** Files API: metadata in the store, bytes in the blob store, owner-scoped like every record. */
export class FilesService {
  constructor(private readonly d: FilesServiceDeps) {}

  /** The caller's live file, or 404 (another owner's id and a deleted file look the same). */
  async find(owner: string, id: string): Promise<FileRecord> {
    const file = await this.d.files.get(owner, id);
    if (!file || file.deleted) throw fileNotFound();
    return file;
  }

  async upload(owner: string, req: IncomingMessage) {
    const blobKey = this.d.ids.next('blob');
    const { stored, fields } = await readUpload(req, { maxBytes: this.d.maxBytes }, async (part) => {
      const hash = createHash('sha256');
      const { size } = await this.d.blobs.put(blobKey, hashing(part.content, hash));
      return { size, sha256: hash.digest('hex'), filename: part.filename, declaredType: part.declaredType };
    });
    try {
      const expiresIn = expiresInSeconds(fields['expires_in_seconds']);
      const now = this.d.clock.now();
      const mime = mimeTypeOf(fileNameOf(stored.filename, 'application/octet-stream'), stored.declaredType);
      const file: FileRecord = {
        id: this.d.ids.next('file'),
        owner_id: owner,
        filename: fileNameOf(stored.filename, mime),
        mime_type: mime,
        size_bytes: stored.size,
        created_at: now.toISOString(),
        expires_at: expiresIn === null ? null : new Date(now.getTime() + expiresIn * 1000).toISOString(),
        downloadable: true,
        scope: null,
        blob_key: blobKey,
        sha256: stored.sha256,
        output: null,
        deleted: false,
      };
      await this.d.files.put(file);
      return renderFile(file);
    } catch (e) {
      await this.d.blobs.delete(blobKey);
      throw e;
    }
  }

  async list(owner: string, q: RouteInput<typeof FileRoutes.list>['query']) {
    if (q.ids !== undefined && (q.page !== undefined || q.limit !== undefined)) {
      throw new ValidationError('ids cannot be combined with page or limit', 'ids');
    }
    const page = await this.d.files.list(owner, {
      limit: q.ids !== undefined ? 100 : (q.limit ?? DEFAULT_PAGE_LIMIT),
      page: q.page ?? null,
      order: 'desc',
      scope_id: q.scope_id,
      ids: q.ids,
    });
    return { data: page.data.map(renderFile), next_page: q.ids !== undefined ? null : page.next_page };
  }

  async get(owner: string, id: string) {
    return renderFile(await this.find(owner, id));
  }

  /** The file and its bytes; an expired file's bytes are gone (404 FILE_EXPIRED). */
  async content(owner: string, id: string): Promise<{ file: FileRecord; bytes: Readable }> {
    const file = await this.find(owner, id);
    if (file.expires_at !== null && Date.parse(file.expires_at) <= this.d.clock.now().getTime()) {
      await this.d.blobs.delete(file.blob_key);
      throw new NotFoundError('the file expired; its content is no longer available', 'FILE_EXPIRED');
    }
    const bytes = await this.d.blobs.get(file.blob_key);
    if (bytes === null) throw new NotFoundError('the file has no content any more', 'FILE_CONTENT_MISSING');
    return { file, bytes };
  }

  async delete(owner: string, id: string) {
    const file = await this.d.files.markDeleted(owner, id);
    if (file === null) throw fileNotFound();
    await this.d.blobs.delete(file.blob_key);
    return { id, type: 'file_deleted' as const };
  }
}

function expiresInSeconds(raw: string | undefined): number | null {
  if (raw === undefined || raw === '') return null;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < EXPIRES_IN_SECONDS.min || value > EXPIRES_IN_SECONDS.max) {
    throw new ValidationError(`expires_in_seconds must be an integer between ${EXPIRES_IN_SECONDS.min} and ${EXPIRES_IN_SECONDS.max}`, 'expires_in_seconds');
  }
  return value;
}

async function* hashing(content: AsyncIterable<Uint8Array>, hash: ReturnType<typeof createHash>): AsyncIterable<Uint8Array> {
  for await (const chunk of content) {
    hash.update(chunk);
    yield chunk;
  }
}
