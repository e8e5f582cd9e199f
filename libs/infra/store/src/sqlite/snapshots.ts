import type { SessionSnapshot, SessionSnapshots } from '@berth/ports';
import type { PreparedCommit } from '../shared/commit';
import type { SqliteDb } from './sqlite-db';

type Row = { session_id: string; version: number; state: string; updated_at: string };

export class SqliteSnapshots implements SessionSnapshots {
  constructor(private readonly db: SqliteDb) {}

  async load(sessionId: string): Promise<SessionSnapshot | null> {
    const row = this.db.stmt('SELECT * FROM snapshots WHERE session_id = ?').get(sessionId) as Row | undefined;
    return row ? { sessionId: row.session_id, version: row.version, state: JSON.parse(row.state), updatedAt: row.updated_at } : null;
  }

  /** Inside a commit's transaction: the commit decided the position, so its snapshot replaces the stored one. */
  write(sessionId: string, snapshot: NonNullable<PreparedCommit['snapshot']>): void {
    this.db
      .stmt(
        `INSERT INTO snapshots (session_id, version, state, updated_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (session_id) DO UPDATE SET version = excluded.version, state = excluded.state, updated_at = excluded.updated_at`,
      )
      .run(sessionId, snapshot.version, snapshot.state, snapshot.updatedAt);
  }
}
