import type { IdempotencyKeys, IdempotencyRecord } from '@berth/ports';
import type { SqliteDb } from './sqlite-db';

export class SqliteIdempotencyKeys implements IdempotencyKeys {
  constructor(private readonly db: SqliteDb) {}

  async claim(record: IdempotencyRecord): Promise<IdempotencyRecord> {
    return this.db.write(() => {
      this.db
        .stmt('INSERT INTO idempotency_keys (owner_id, key, subject, session_id, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING')
        .run(record.owner_id, record.key, record.subject, record.session_id, record.created_at);
      return this.read(record.owner_id, record.key) as IdempotencyRecord;
    });
  }

  async get(ownerId: string, key: string): Promise<IdempotencyRecord | null> {
    return this.read(ownerId, key);
  }

  private read(ownerId: string, key: string): IdempotencyRecord | null {
    const row = this.db.stmt('SELECT owner_id, key, subject, session_id, created_at FROM idempotency_keys WHERE owner_id = ? AND key = ?').get(ownerId, key);
    return (row as IdempotencyRecord | undefined) ?? null;
  }
}
