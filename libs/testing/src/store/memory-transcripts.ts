import type { TranscriptChunk, TranscriptMirror } from '@berth/ports';
import { planTranscriptAppend, type TranscriptPiece } from '@berth/store/shared';

/** Each mirrored file as its pieces so far; appends follow the adapters' offset and piece rules. */
export class MemoryTranscripts implements TranscriptMirror {
  private readonly mirrored = new Map<string, Map<string, TranscriptPiece[]>>();

  async append(chunk: TranscriptChunk): Promise<void> {
    const files = this.mirrored.get(chunk.session_id) ?? new Map<string, TranscriptPiece[]>();
    const pieces = files.get(chunk.path) ?? [];
    const plan = planTranscriptAppend(sizeOf(pieces), chunk);
    if (plan.kind === 'skip') return;
    files.set(chunk.path, [...pieces, ...plan.pieces]);
    this.mirrored.set(chunk.session_id, files);
  }

  async files(sessionId: string): Promise<readonly { path: string; data: string }[]> {
    return [...(this.mirrored.get(sessionId) ?? [])].map(([path, pieces]) => ({ path, data: pieces.map((p) => p.data).join('') }));
  }

  async size(sessionId: string, path: string): Promise<number> {
    return sizeOf(this.mirrored.get(sessionId)?.get(path) ?? []);
  }

  async sizes(sessionId: string): Promise<readonly { path: string; bytes: number }[]> {
    return [...(this.mirrored.get(sessionId) ?? [])].map(([path, pieces]) => ({ path, bytes: sizeOf(pieces) })).sort((a, b) => a.path.localeCompare(b.path));
  }

  /** For the inspection: every file's pieces. */
  all(): readonly { session_id: string; path: string; pieces: readonly TranscriptPiece[] }[] {
    return [...this.mirrored].flatMap(([session_id, files]) => [...files].map(([path, pieces]) => ({ session_id, path, pieces })));
  }
}

const sizeOf = (pieces: readonly TranscriptPiece[]): number => {
  const last = pieces[pieces.length - 1];
  return last ? last.offset + last.bytes : 0;
};
