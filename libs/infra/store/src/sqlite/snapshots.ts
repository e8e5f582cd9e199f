import type { SessionSnapshot, SessionSnapshots } from '@berth/ports';
import type { SqliteDb } from './sqlite-db';

type Row = { session_id: string; version: number; state: string; updated_at: string };

export class SqliteSnapshots implements SessionSnapshots {
  constructor(private readonly db: SqliteDb) {}

  async load(sessionId: string): Promise<SessionSnapshot | null> {
    const row = this.db.stmt('SELECT * FROM snapshots WHERE session_id = ?').get(sessionId) as Row | undefined;
    return row ? { sessionId: row.session_id, version: row.version, state: JSON.parse(row.state), updatedAt: row.updated_at } : null;
  }

  async save(snapshot: SessionSnapshot, expectedVersion: number): Promise<boolean> {
    return this.write(snapshot, expectedVersion);
  }

  /** Synchronous, so a command commit can run it inside its transaction. */
  write(snapshot: SessionSnapshot, expectedVersion: number): boolean {
    const state = JSON.stringify(snapshot.state);
    const result =
      expectedVersion === 0
        ? this.db
            .stmt('INSERT INTO snapshots (session_id, version, state, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (session_id) DO NOTHING')
            .run(snapshot.sessionId, snapshot.version, state, snapshot.updatedAt)
        : this.db
            .stmt('UPDATE snapshots SET version = ?, state = ?, updated_at = ? WHERE session_id = ? AND version = ?')
            .run(snapshot.version, state, snapshot.updatedAt, snapshot.sessionId, expectedVersion);
    return result.changes === 1;
  }
}
