import type { TranscriptChunk, TranscriptMirror } from '@berth/ports';
import { planChunk } from '../shared/checks';
import type { SqliteDb } from './sqlite-db';

export class SqliteTranscripts implements TranscriptMirror {
  constructor(private readonly db: SqliteDb) {}

  async append(chunk: TranscriptChunk): Promise<void> {
    this.db.write(() => {
      const plan = planChunk(this.sizeOf(chunk.session_id, chunk.path), chunk.offset, chunk.data, `${chunk.session_id}:${chunk.path}`);
      if (plan.kind === 'skip') return;
      this.db
        .stmt('INSERT INTO transcript_chunks (session_id, path, "offset", bytes, data) VALUES (?, ?, ?, ?, ?)')
        .run(chunk.session_id, chunk.path, plan.offset, plan.bytes, plan.data);
    });
  }

  async files(sessionId: string): Promise<readonly { path: string; data: string }[]> {
    const rows = this.db.stmt('SELECT path, data FROM transcript_chunks WHERE session_id = ? ORDER BY path, "offset"').all(sessionId) as { path: string; data: string }[];
    const files = new Map<string, string[]>();
    for (const row of rows) files.set(row.path, [...(files.get(row.path) ?? []), row.data]);
    return [...files].map(([path, parts]) => ({ path, data: parts.join('') }));
  }

  async size(sessionId: string, path: string): Promise<number> {
    return this.sizeOf(sessionId, path);
  }

  private sizeOf(sessionId: string, path: string): number {
    const row = this.db
      .stmt('SELECT "offset" + bytes AS size FROM transcript_chunks WHERE session_id = ? AND path = ? ORDER BY "offset" DESC LIMIT 1')
      .get(sessionId, path) as { size: number } | undefined;
    return row?.size ?? 0;
  }
}
