import type { Readable } from 'node:stream';
import type { SealedSecret } from '@berth/contracts';
import type { Page, PageQuery } from './read-models.port';

/**
 * Files API metadata (`BetaFileMetadata` plus what Berth needs to serve it) and the blob store that
 * holds the bytes. Metadata is owner-scoped like every other record; content is addressed by an
 * opaque blob key that only the metadata knows.
 */
export type FileScope = Readonly<{ type: 'session'; id: string }>;

export type FileRecord = Readonly<{
  id: string;
  owner_id: string;
  filename: string;
  mime_type: string;
  size_bytes: number;
  created_at: string;
  /** When the bytes stop being downloadable (`expires_in_seconds` on upload); null = never. */
  expires_at: string | null;
  downloadable: boolean;
  /** A file the platform captured from a session (its outputs); null for uploads. */
  scope: FileScope | null;
  /** Where the bytes are in the blob store. */
  blob_key: string;
  sha256: string;
  /**
   * For a captured session output: its path under the outputs directory and the fingerprint
   * (size and mtime) it was captured at, so an unchanged file is not captured again.
   */
  output: Readonly<{ path: string; fingerprint: string }> | null;
  /** Deleted through the API: hidden from every read, kept so an unchanged output is not re-captured. */
  deleted: boolean;
}>;

export type FileListQuery = PageQuery & Readonly<{ scope_id?: string; ids?: readonly string[] }>;

export interface FileStore {
  /** Inserts a new record; an id already stored (any owner's, deleted ones included) is a ConcurrencyError, and nothing is stored. */
  insert(file: FileRecord): Promise<void>;
  /** Inserts, or replaces the record with this id when it has the same owner (another owner's id is left as it is). */
  put(file: FileRecord): Promise<void>;
  /** The record, deleted ones included (callers decide what a tombstone means); null for another owner's id. */
  get(ownerId: string, id: string): Promise<FileRecord | null>;
  /** Keyset pages over (created_at, id), never deleted records; `scope_id` and `ids` filter. */
  list(ownerId: string, query: FileListQuery): Promise<Page<FileRecord>>;
  /** Marks the file deleted; the record as it was, or null when absent, another owner's or already deleted. */
  markDeleted(ownerId: string, id: string): Promise<FileRecord | null>;
}

export interface BlobStore {
  /**
   * Streams `content` into a new blob. Nothing is readable under `key` until the whole stream is
   * written; a source that throws (a size limit, a dropped upload) leaves nothing behind.
   * `key` is a safe token (letters, digits, `_`, `-`) the caller draws; it must not exist yet.
   */
  put(key: string, content: AsyncIterable<Uint8Array>): Promise<{ size: number }>;
  /** The bytes as a stream, or null when there is no such blob. */
  get(key: string): Promise<Readable | null>;
  /** Removes the blob; a missing one is fine. */
  delete(key: string): Promise<void>;
}

/**
 * Credentials a session needs outside the journal (a repository's `authorization_token`): events,
 * snapshots and logs never hold them. Keyed by session and a name (the resource id). Kept sealed
 * (a `SecretBox` seals them to `sessionSecretAad(session, name)` before they get here, and only
 * the code that uses one opens it): the store never sees a plaintext token.
 */
export interface SessionSecrets {
  put(sessionId: string, name: string, sealed: SealedSecret): Promise<void>;
  get(sessionId: string, name: string): Promise<SealedSecret | null>;
  /** Removes one secret, or every secret of the session when `name` is omitted. */
  delete(sessionId: string, name?: string): Promise<void>;
}
