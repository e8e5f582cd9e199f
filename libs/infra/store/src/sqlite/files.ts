import { ConcurrencyError } from '@berth/core';
import type { FileListQuery, FileRecord, FileStore, Page } from '@berth/ports';
import { checkIds } from '../shared/checks';
import { checkLimit, orderOf, pageOf } from '../shared/paging';
import { keysetPage } from './keyset';
import { isConstraintError, type SqliteDb } from './sqlite-db';

type Row = { record: string; deleted: number };
/** The `deleted` column is the truth (markDeleted flips only it). */
const recordOf = (row: unknown): FileRecord | null => (row ? { ...(JSON.parse((row as Row).record) as FileRecord), deleted: (row as Row).deleted === 1 } : null);

export class SqliteFiles implements FileStore {
  constructor(private readonly db: SqliteDb) {}

  async insert(file: FileRecord): Promise<void> {
    try {
      this.db
        .stmt('INSERT INTO files (id, owner_id, scope_id, created_at, deleted, record) VALUES (?, ?, ?, ?, ?, ?)')
        .run(file.id, file.owner_id, file.scope?.id ?? null, file.created_at, file.deleted ? 1 : 0, JSON.stringify(file));
    } catch (e) {
      if (isConstraintError(e)) throw new ConcurrencyError(`file ${file.id} already exists`);
      throw e;
    }
  }

  async put(file: FileRecord): Promise<void> {
    this.db
      .stmt(
        `INSERT INTO files (id, owner_id, scope_id, created_at, deleted, record) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET scope_id = excluded.scope_id, created_at = excluded.created_at,
           deleted = excluded.deleted, record = excluded.record
         WHERE files.owner_id = excluded.owner_id`,
      )
      .run(file.id, file.owner_id, file.scope?.id ?? null, file.created_at, file.deleted ? 1 : 0, JSON.stringify(file));
  }

  async get(ownerId: string, id: string): Promise<FileRecord | null> {
    return recordOf(this.db.stmt('SELECT record, deleted FROM files WHERE id = ? AND owner_id = ?').get(id, ownerId));
  }

  async list(ownerId: string, query: FileListQuery): Promise<Page<FileRecord>> {
    const limit = checkLimit(query.limit);
    const order = orderOf(query.order);
    const page = keysetPage('files', order, query.page);
    const where = ['owner_id = ?', 'deleted = 0', ...page.where];
    const params: unknown[] = [ownerId, ...page.params];
    if (query.scope_id !== undefined) {
      where.push('scope_id = ?');
      params.push(query.scope_id);
    }
    if (query.ids !== undefined) {
      const ids = checkIds(query.ids);
      where.push(`id IN (${ids.map(() => '?').join(', ') || 'NULL'})`);
      params.push(...ids);
    }
    const rows = this.db.raw.prepare(`SELECT record, deleted FROM files WHERE ${where.join(' AND ')} ${page.orderBy} LIMIT ?`).all(...params, limit + 1);
    return pageOf('files', order, limit, rows.map((r) => recordOf(r) as FileRecord), (f) => [f.created_at, f.id]);
  }

  async markDeleted(ownerId: string, id: string): Promise<FileRecord | null> {
    return this.db.write(() => {
      const file = recordOf(this.db.stmt('SELECT record, deleted FROM files WHERE id = ? AND owner_id = ? AND deleted = 0').get(id, ownerId));
      if (file !== null) this.db.stmt('UPDATE files SET deleted = 1 WHERE id = ?').run(id);
      return file;
    });
  }
}
