import { ConcurrencyError, ValidationError } from '@berth/core';
import type { FileListQuery, FileRecord, FileStore, Page } from '@berth/ports';
import { pageRows } from './paging';

export class MemoryFiles implements FileStore {
  private readonly files = new Map<string, FileRecord>();

  async insert(file: FileRecord): Promise<void> {
    if (this.files.has(file.id)) throw new ConcurrencyError(`file ${file.id} already exists`);
    this.files.set(file.id, structuredClone(file));
  }

  async put(file: FileRecord): Promise<void> {
    const stored = this.files.get(file.id);
    if (stored && stored.owner_id !== file.owner_id) return;
    this.files.set(file.id, structuredClone(file));
  }

  async get(ownerId: string, id: string): Promise<FileRecord | null> {
    const file = this.files.get(id);
    return file && file.owner_id === ownerId ? structuredClone(file) : null;
  }

  async list(ownerId: string, query: FileListQuery): Promise<Page<FileRecord>> {
    const ids = query.ids === undefined ? null : new Set(query.ids);
    if (ids !== null && ids.size > 100) throw new ValidationError('ids takes at most 100 entries', 'ids');
    const rows = [...this.files.values()].filter(
      (f) => f.owner_id === ownerId && !f.deleted && (query.scope_id === undefined || f.scope?.id === query.scope_id) && (ids === null || ids.has(f.id)),
    );
    return structuredClone(pageRows('files', rows, query, (f) => [f.created_at, f.id]));
  }

  async markDeleted(ownerId: string, id: string): Promise<FileRecord | null> {
    const file = this.files.get(id);
    if (!file || file.owner_id !== ownerId || file.deleted) return null;
    this.files.set(id, { ...file, deleted: true });
    return structuredClone(file);
  }
}
