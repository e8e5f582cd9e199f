import { ConcurrencyError } from '@berth/core';
import type { EnvironmentRecord, EnvironmentStore, Page, PageQuery, WebhookOutbox } from '@berth/ports';
import { recordJson } from '../shared/limits';
import { checkLimit, orderOf, pageOf } from '../shared/paging';
import { keysetPage } from './keyset';
import { isConstraintError, type SqliteDb } from './sqlite-db';
import { insertDeliveries } from './webhooks';

const recordOf = (row: unknown): EnvironmentRecord | null => (row ? (JSON.parse((row as { record: string }).record) as EnvironmentRecord) : null);

export class SqliteEnvironments implements EnvironmentStore {
  constructor(private readonly db: SqliteDb) {}

  async insert(env: EnvironmentRecord, webhooks: WebhookOutbox = []): Promise<void> {
    const json = recordJson(`environment ${env.id}`, env);
    try {
      this.db.write(() => {
        this.db
          .stmt('INSERT INTO environments (id, owner_id, created_at, archived, deleted, record) VALUES (?, ?, ?, ?, ?, ?)')
          .run(env.id, env.owner_id, env.created_at, env.archived_at === null ? 0 : 1, env.deleted ? 1 : 0, json);
        insertDeliveries(this.db, webhooks);
      });
    } catch (e) {
      if (isConstraintError(e)) throw new ConcurrencyError(`environment ${env.id} already exists`);
      throw e;
    }
  }

  async put(env: EnvironmentRecord, webhooks: WebhookOutbox = []): Promise<void> {
    const json = recordJson(`environment ${env.id}`, env);
    this.db.write(() => {
      const written = this.db
        .stmt(
        `INSERT INTO environments (id, owner_id, created_at, archived, deleted, record) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET created_at = excluded.created_at, archived = excluded.archived,
           deleted = excluded.deleted, record = excluded.record
         WHERE environments.owner_id = excluded.owner_id`,
      )
        .run(env.id, env.owner_id, env.created_at, env.archived_at === null ? 0 : 1, env.deleted ? 1 : 0, json).changes === 1;
      if (written) insertDeliveries(this.db, webhooks);
    });
  }

  async get(ownerId: string, id: string): Promise<EnvironmentRecord | null> {
    return recordOf(this.db.stmt('SELECT record FROM environments WHERE id = ? AND owner_id = ?').get(id, ownerId));
  }

  async list(ownerId: string, query: PageQuery & { include_archived?: boolean }): Promise<Page<EnvironmentRecord>> {
    const limit = checkLimit(query.limit);
    const order = orderOf(query.order);
    const page = keysetPage('environments', order, query.page);
    const where = ['owner_id = ?', 'deleted = 0', ...page.where];
    if (!query.include_archived) where.push('archived = 0');
    const rows = this.db.stmt(`SELECT record FROM environments WHERE ${where.join(' AND ')} ${page.orderBy} LIMIT ?`).all(ownerId, ...page.params, limit + 1);
    return pageOf('environments', order, limit, rows.map((r) => recordOf(r) as EnvironmentRecord), (e) => [e.created_at, e.id]);
  }
}
