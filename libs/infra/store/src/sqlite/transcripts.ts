import type { TranscriptChunk, TranscriptMirror } from '@berth/ports';
import { planTranscriptAppend } from '../shared/transcripts';
import type { SqliteDb } from './sqlite-db';

export class SqliteTranscripts implements TranscriptMirror {
  constructor(private readonly db: SqliteDb) {}

  /** One transaction: the pieces of an append land together or not at all. */
  async append(chunk: TranscriptChunk): Promise<void> {
    this.db.write(() => {
      const plan = planTranscriptAppend(this.sizeOf(chunk.session_id, chunk.path), chunk);
      if (plan.kind === 'skip') return;
      const insert = this.db.stmt('INSERT INTO transcript_chunks (session_id, path, "offset", bytes, data) VALUES (?, ?, ?, ?, ?)');
      for (const piece of plan.pieces) insert.run(chunk.session_id, chunk.path, piece.offset, piece.bytes, piece.data);
    });
  }

  async files(sessionId: string): Promise<readonly { path: string; data: string }[]> {
    const rows = this.db.stmt('SELECT path, data FROM transcript_chunks WHERE session_id = ? ORDER BY path, "offset"').all(sessionId) as { path: string; data: string }[];
    const files = new Map<string, string[]>();
    for (const row of rows) {
      const parts = files.get(row.path);
      if (parts) parts.push(row.data);
      else files.set(row.path, [row.data]);
    }
    return [...files].map(([path, parts]) => ({ path, data: parts.join('') }));
  }

  async size(sessionId: string, path: string): Promise<number> {
    return this.sizeOf(sessionId, path);
  }

  async sizes(sessionId: string): Promise<readonly { path: string; bytes: number }[]> {
    return this.db
      .stmt('SELECT path, MAX("offset" + bytes) AS bytes FROM transcript_chunks WHERE session_id = ? GROUP BY path ORDER BY path')
      .all(sessionId) as { path: string; bytes: number }[];
  }

  private sizeOf(sessionId: string, path: string): number {
    const row = this.db
      .stmt('SELECT "offset" + bytes AS size FROM transcript_chunks WHERE session_id = ? AND path = ? ORDER BY "offset" DESC LIMIT 1')
      .get(sessionId, path) as { size: number } | undefined;
    return row?.size ?? 0;
  }
}
