import type { SealedSecret } from '@berth/contracts';
import type { SessionSecrets } from '@berth/ports';
import type { SqliteDb } from './sqlite-db';

/** Sealed session secrets, one row each; `value` is the sealed form as JSON (a row of an earlier plaintext release is not read). */
export class SqliteSecrets implements SessionSecrets {
  constructor(private readonly db: SqliteDb) {}

  async put(sessionId: string, name: string, sealed: SealedSecret): Promise<void> {
    const value = JSON.stringify({ key_id: sealed.key_id, iv: sealed.iv, ciphertext: sealed.ciphertext, tag: sealed.tag });
    this.db
      .stmt('INSERT INTO session_secrets (session_id, name, value) VALUES (?, ?, ?) ON CONFLICT (session_id, name) DO UPDATE SET value = excluded.value')
      .run(sessionId, name, value);
  }

  async get(sessionId: string, name: string): Promise<SealedSecret | null> {
    const row = this.db.stmt('SELECT value FROM session_secrets WHERE session_id = ? AND name = ?').get(sessionId, name) as { value: string } | undefined;
    return row === undefined ? null : sealedOf(row.value);
  }

  async delete(sessionId: string, name?: string): Promise<void> {
    if (name === undefined) this.db.stmt('DELETE FROM session_secrets WHERE session_id = ?').run(sessionId);
    else this.db.stmt('DELETE FROM session_secrets WHERE session_id = ? AND name = ?').run(sessionId, name);
  }
}

function sealedOf(value: string): SealedSecret | null {
  try {
    const parsed = JSON.parse(value) as Partial<Record<keyof SealedSecret, unknown>>;
    const { key_id, iv, ciphertext, tag } = parsed;
    return typeof key_id === 'string' && typeof iv === 'string' && typeof ciphertext === 'string' && typeof tag === 'string' ? { key_id, iv, ciphertext, tag } : null;
  } catch {
    return null;
  }
}
