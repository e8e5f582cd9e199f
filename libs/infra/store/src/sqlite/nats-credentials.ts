import { ConcurrencyError } from '@berth/core';
import type { NatsCredentialRecord, NatsCredentials } from '@berth/ports';
import { isConstraintError, type SqliteDb } from './sqlite-db';

const COLUMNS = 'id, owner_id, name, public_key, created_at, revoked_at';

export class SqliteNatsCredentials implements NatsCredentials {
  constructor(private readonly db: SqliteDb) {}

  async insert(c: NatsCredentialRecord): Promise<void> {
    try {
      this.db.stmt(`INSERT INTO nats_credentials (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)`).run(c.id, c.owner_id, c.name, c.public_key, c.created_at, c.revoked_at);
    } catch (e) {
      if (isConstraintError(e)) throw new ConcurrencyError(`nats credential ${c.id} or key ${c.public_key} already exists`);
      throw e;
    }
  }

  async list(ownerId: string): Promise<readonly NatsCredentialRecord[]> {
    return this.db.stmt(`SELECT ${COLUMNS} FROM nats_credentials WHERE owner_id = ? ORDER BY created_at, id`).all(ownerId) as NatsCredentialRecord[];
  }

  async revoke(ownerId: string, id: string, at: string): Promise<NatsCredentialRecord | null> {
    this.db.stmt('UPDATE nats_credentials SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ? AND owner_id = ?').run(at, id, ownerId);
    return (this.db.stmt(`SELECT ${COLUMNS} FROM nats_credentials WHERE id = ? AND owner_id = ?`).get(id, ownerId) as NatsCredentialRecord | undefined) ?? null;
  }

  async revoked(): Promise<readonly NatsCredentialRecord[]> {
    return this.db.stmt(`SELECT ${COLUMNS} FROM nats_credentials WHERE revoked_at IS NOT NULL ORDER BY revoked_at, id`).all() as NatsCredentialRecord[];
  }
}
