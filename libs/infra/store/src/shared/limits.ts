import { BerthError, ErrorCodes } from '@berth/core';

const MiB = 1024 * 1024;

/**
 * Sizes every adapter keeps, so a deployment behaves the same on SQLite, MongoDB and in memory.
 * They are set by MongoDB's 16 MiB BSON document limit (see docs/deploy.md → Size limits): one
 * stored record (an event, a read-model row, an agent version, an environment, a snapshot) is one
 * document holding its JSON, and half the limit leaves room for the fields beside it and for an
 * agent head that repeats its latest version. Transcripts are stored in pieces, so no file size
 * hits a limit.
 */
export const StoreLimits = {
  /** One stored record's JSON, in UTF-8 bytes. */
  recordBytes: 8 * MiB,
  /** One transcript piece, in UTF-8 bytes (an append is split into pieces of at most this). */
  transcriptPieceBytes: 1 * MiB,
} as const;

export const utf8Bytes = (text: string): number => Buffer.byteLength(text, 'utf8');

/** The JSON of a record to store, or a 413 naming what was too large (never a driver error). */
export function recordJson(what: string, value: unknown): string {
  const json = JSON.stringify(value);
  const bytes = utf8Bytes(json);
  if (bytes > StoreLimits.recordBytes) {
    throw new BerthError(ErrorCodes.PAYLOAD_TOO_LARGE, 413, `${what} is ${bytes} bytes as JSON; the store holds at most ${StoreLimits.recordBytes}`, {
      bytes,
      limit: StoreLimits.recordBytes,
    });
  }
  return json;
}
