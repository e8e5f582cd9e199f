import type { ApiKeyRecord, ApiKeys } from '@berth/ports';
import { ConcurrencyError } from '@berth/core';
import { isConstraintError, type SqliteDb } from './sqlite-db';

const COLUMNS = 'id, owner_id, prefix, hash, name, created_at, revoked_at';

export class SqliteApiKeys implements ApiKeys {
  constructor(private readonly db: SqliteDb) {}

  async insert(key: ApiKeyRecord): Promise<void> {
    try {
      this.db
        .stmt(`INSERT INTO api_keys (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)`)
        .run(key.id, key.owner_id, key.prefix, key.hash, key.name, key.created_at, key.revoked_at);
    } catch (e) {
      if (isConstraintError(e)) throw new ConcurrencyError(`api key ${key.id} or prefix ${key.prefix} already exists`);
      throw e;
    }
  }

  async byPrefix(prefix: string): Promise<ApiKeyRecord | null> {
    return (this.db.stmt(`SELECT ${COLUMNS} FROM api_keys WHERE prefix = ?`).get(prefix) as ApiKeyRecord | undefined) ?? null;
  }

  async list(ownerId: string): Promise<readonly ApiKeyRecord[]> {
    return this.db.stmt(`SELECT ${COLUMNS} FROM api_keys WHERE owner_id = ? ORDER BY created_at, id`).all(ownerId) as ApiKeyRecord[];
  }

  /** True when the owner has this key; revoking again keeps the first revocation time. */
  async revoke(ownerId: string, id: string, at: string): Promise<boolean> {
    const found = this.db.stmt('UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ? AND owner_id = ?').run(at, id, ownerId);
    return found.changes === 1;
  }
}
