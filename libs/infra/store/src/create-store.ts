import { ValidationError } from '@berth/core';
import type { BerthStore } from '@berth/ports';
import { MongoStore } from './mongo/mongo-store';
import { backupSqlite, type BackupResult } from './sqlite/backup';
import type { SqliteOptions } from './sqlite/sqlite-db';
import { SqliteStore } from './sqlite/sqlite-store';

export type CreateStoreOptions = Readonly<{
  /** SQLite only: where file contents live (default `blobs/` beside the database file). MongoDB keeps them in GridFS. */
  blobDir?: string;
}>;

const USAGE = 'expected sqlite::memory:, sqlite:<path>, sqlite:///<absolute path> (optionally ?synchronous=full|normal), mongodb://… or mongodb+srv://…';

/** What a store URL names. */
export type StoreTarget = { kind: 'sqlite'; path: string; options: SqliteOptions } | { kind: 'mongodb'; url: string };

export function parseStoreUrl(url: string): StoreTarget {
  const text = typeof url === 'string' ? url.trim() : '';
  if (text.startsWith('sqlite:')) {
    const [location = '', query] = text.split('?', 2) as [string, string | undefined];
    return { kind: 'sqlite', path: sqlitePath(location), options: sqliteOptions(text, query) };
  }
  if (text.startsWith('mongodb://') || text.startsWith('mongodb+srv://')) return { kind: 'mongodb', url: text };
  throw new ValidationError(`unsupported store URL ${JSON.stringify(redact(text))}: ${USAGE}`, 'store_url');
}

/** Opens the store a URL names. The store is not initialised: call `init()` before use. */
export function createStore(url: string, options: CreateStoreOptions = {}): BerthStore {
  const target = parseStoreUrl(url);
  if (target.kind === 'mongodb') return new MongoStore(target.url);
  return new SqliteStore(target.path, { ...target.options, ...(options.blobDir !== undefined ? { blobDir: options.blobDir } : {}) });
}

/**
 * A consistent copy of the store a URL names, while the platform runs: SQLite through its online
 * backup API. MongoDB is copied with its own tools (see docs/deploy.md → Backups).
 */
export async function backupStore(url: string, destination: string): Promise<BackupResult> {
  const target = parseStoreUrl(url);
  if (target.kind === 'mongodb') {
    throw new ValidationError('a MongoDB store is backed up with mongodump --oplog against the replica set (docs/deploy.md → Backups)', 'store_url');
  }
  if (target.path === ':memory:') throw new ValidationError('an in-memory SQLite store has nothing to back up', 'store_url');
  return backupSqlite(target.path, destination);
}

function sqlitePath(url: string): string {
  const rest = url.slice('sqlite:'.length);
  if (rest === ':memory:') return rest;
  if (rest.startsWith('//')) {
    if (!rest.startsWith('///') || rest.length === 3) throw new ValidationError(`SQLite URL ${JSON.stringify(url)} needs an absolute path after sqlite:///`, 'store_url');
    return rest.slice(2);
  }
  if (rest === '') throw new ValidationError(`SQLite URL ${JSON.stringify(url)} names no file: ${USAGE}`, 'store_url');
  return rest;
}

function sqliteOptions(url: string, query: string | undefined): SqliteOptions {
  const options: { synchronous?: 'full' | 'normal' } = {};
  for (const [name, value] of new URLSearchParams(query ?? '')) {
    if (name === 'synchronous' && (value === 'full' || value === 'normal')) options.synchronous = value;
    else throw new ValidationError(`SQLite URL ${JSON.stringify(url)} has an unknown option ${name}=${value}: ${USAGE}`, 'store_url');
  }
  return options;
}

/** Never echo credentials from a URL into an error message. */
export const redact = (url: string): string => url.replace(/\/\/[^@/]*@/, '//***@');
