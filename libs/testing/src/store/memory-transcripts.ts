import { ValidationError } from '@berth/core';
import type { TranscriptChunk, TranscriptMirror } from '@berth/ports';

/** Each mirrored file as its bytes so far; appends follow the adapters' offset rules. */
export class MemoryTranscripts implements TranscriptMirror {
  private readonly mirrored = new Map<string, Map<string, Buffer>>();

  async append(chunk: TranscriptChunk): Promise<void> {
    if (!Number.isInteger(chunk.offset) || chunk.offset < 0) throw new ValidationError('offset must be a non-negative integer', 'offset');
    const files = this.mirrored.get(chunk.session_id) ?? new Map<string, Buffer>();
    const stored = files.get(chunk.path) ?? Buffer.alloc(0);
    const data = Buffer.from(chunk.data, 'utf8');
    if (chunk.offset > stored.length) {
      throw new ValidationError(`${chunk.session_id}:${chunk.path}: chunk at offset ${chunk.offset} would leave a gap after ${stored.length} mirrored bytes`, 'offset');
    }
    if (chunk.offset + data.length <= stored.length) return;
    files.set(chunk.path, Buffer.concat([stored, data.subarray(stored.length - chunk.offset)]));
    this.mirrored.set(chunk.session_id, files);
  }

  async files(sessionId: string): Promise<readonly { path: string; data: string }[]> {
    return [...(this.mirrored.get(sessionId) ?? [])].map(([path, data]) => ({ path, data: data.toString('utf8') }));
  }

  async size(sessionId: string, path: string): Promise<number> {
    return this.mirrored.get(sessionId)?.get(path)?.length ?? 0;
  }
}
