import type { TranscriptChunk, TranscriptMirror } from '@berth/ports';

/** The transcript mirror in memory (chunks appended at increasing offsets). */
export class InMemoryTranscripts implements TranscriptMirror {
  private readonly files_ = new Map<string, Map<string, string>>();

  async append(chunk: TranscriptChunk): Promise<void> {
    const files = this.files_.get(chunk.session_id) ?? new Map<string, string>();
    const data = files.get(chunk.path) ?? '';
    if (chunk.offset === data.length) files.set(chunk.path, data + chunk.data);
    this.files_.set(chunk.session_id, files);
  }

  async files(sessionId: string): Promise<readonly { path: string; data: string }[]> {
    return [...(this.files_.get(sessionId) ?? new Map<string, string>()).entries()].map(([path, data]) => ({ path, data }));
  }

  async size(sessionId: string, path: string): Promise<number> {
    return this.files_.get(sessionId)?.get(path)?.length ?? 0;
  }

  async sizes(sessionId: string): Promise<readonly { path: string; bytes: number }[]> {
    return [...(this.files_.get(sessionId) ?? new Map<string, string>()).entries()].map(([path, data]) => ({ path, bytes: data.length }));
  }
}
