import type { SessionSecrets } from '@berth/ports';
import type { SqliteDb } from './sqlite-db';

export class SqliteSecrets implements SessionSecrets {
  constructor(private readonly db: SqliteDb) {}

  async put(sessionId: string, name: string, value: string): Promise<void> {
    this.db
      .stmt('INSERT INTO session_secrets (session_id, name, value) VALUES (?, ?, ?) ON CONFLICT (session_id, name) DO UPDATE SET value = excluded.value')
      .run(sessionId, name, value);
  }

  async get(sessionId: string, name: string): Promise<string | null> {
    const row = this.db.stmt('SELECT value FROM session_secrets WHERE session_id = ? AND name = ?').get(sessionId, name) as { value: string } | undefined;
    return row?.value ?? null;
  }

  async delete(sessionId: string, name?: string): Promise<void> {
    if (name === undefined) this.db.stmt('DELETE FROM session_secrets WHERE session_id = ?').run(sessionId);
    else this.db.stmt('DELETE FROM session_secrets WHERE session_id = ? AND name = ?').run(sessionId, name);
  }
}
