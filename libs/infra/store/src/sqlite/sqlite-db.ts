import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { SQLITE_SCHEMA } from './schema';

export type SqliteOptions = Readonly<{
  /**
   * `normal` (default): the WAL is fsynced at checkpoints, not at each commit. A committed write
   * survives the process being killed (the WAL is in the OS page cache), but the last commits
   * before a power loss or kernel panic may be lost (the database stays consistent).
   * `full`: fsync at each commit, so an acknowledged write also survives power loss.
   */
  synchronous?: 'full' | 'normal';
  busyTimeoutMs?: number;
}>;

/** One better-sqlite3 connection and its prepared statements, compiled once on first use. */
export class SqliteDb {
  readonly raw: Database.Database;
  private readonly statements = new Map<string, Database.Statement>();
  /** Built once: better-sqlite3 compiles a wrapper per `transaction()` call. */
  private readonly inTransaction: Database.Transaction<(fn: () => unknown) => unknown>;

  constructor(readonly path: string, options: SqliteOptions = {}) {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    this.raw = new Database(path);
    this.raw.pragma('journal_mode = WAL');
    this.raw.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
    this.raw.pragma(`synchronous = ${options.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
    this.inTransaction = this.raw.transaction((fn: () => unknown) => fn());
  }

  migrate(): void {
    this.raw.exec(SQLITE_SCHEMA);
  }

  stmt(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.raw.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  /** Runs `fn` in a BEGIN IMMEDIATE transaction: the write lock is taken before the first read. */
  write<T>(fn: () => T): T {
    return this.inTransaction.immediate(fn) as T;
  }

  /** Runs `fn` in a deferred (read) transaction: every read in it sees one point in time, writers go on (WAL). */
  read<T>(fn: () => T): T {
    return this.inTransaction.deferred(fn) as T;
  }

  /** Inside `write`: runs `fn` in a savepoint; a throw rolls back only what `fn` wrote, then rethrows. */
  savepoint<T>(fn: () => T): T {
    return this.inTransaction(fn) as T;
  }

  close(): void {
    if (this.raw.open) this.raw.close();
  }
}

export const isConstraintError = (e: unknown): boolean =>
  typeof e === 'object' && e !== null && typeof (e as { code?: unknown }).code === 'string' && (e as { code: string }).code.startsWith('SQLITE_CONSTRAINT');
