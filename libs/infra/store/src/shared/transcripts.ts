import { ValidationError } from '@berth/core';
import type { TranscriptChunk } from '@berth/ports';
import { StoreLimits } from './limits';

export type TranscriptPiece = Readonly<{ offset: number; data: string; bytes: number }>;

/** What to store for a transcript append, given the bytes already mirrored for its file. */
export type TranscriptPlan = { kind: 'skip' } | { kind: 'append'; pieces: readonly TranscriptPiece[] };

/**
 * The mirror is append-only and idempotent: a chunk wholly inside what is stored is a repeat; a
 * chunk overlapping the end contributes only its new tail; a chunk past the end would leave a hole.
 * The new bytes are cut into pieces of at most `pieceBytes`, never inside a UTF-8 character; the
 * adapter stores all of them or none.
 */
export function planTranscriptAppend(size: number, chunk: TranscriptChunk, pieceBytes: number = StoreLimits.transcriptPieceBytes): TranscriptPlan {
  const { offset } = chunk;
  if (!Number.isInteger(offset) || offset < 0) throw new ValidationError('offset must be a non-negative integer', 'offset');
  if (offset > size) {
    throw new ValidationError(`${chunk.session_id}:${chunk.path}: chunk at offset ${offset} would leave a gap after ${size} mirrored bytes`, 'offset');
  }
  const bytes = Buffer.from(chunk.data, 'utf8');
  if (offset + bytes.length <= size) return { kind: 'skip' };
  const tail = bytes.subarray(size - offset);
  const pieces: TranscriptPiece[] = [];
  for (let start = 0; start < tail.length; ) {
    let end = Math.min(start + pieceBytes, tail.length);
    // Back off continuation bytes (10xxxxxx) so a piece never ends inside a character.
    while (end < tail.length && end > start + 1 && (tail[end] & 0xc0) === 0x80) end--;
    pieces.push({ offset: size + start, data: tail.subarray(start, end).toString('utf8'), bytes: end - start });
    start = end;
  }
  return { kind: 'append', pieces };
}
